/* spread_pull <connect-to> <sync> <sockets> <count>
   Peers of the spread scenario: <sockets> PULL sockets in this process (RCVHWM 0), read with
   zmq_poll. The sender deals its messages round robin: each socket must see its messages in
   increasing order of their sequence numbers, then one end marker (sent to every peer after
   the last message). About <count> each, not exactly: a pipe joins the sender's round robin
   when its socket thread takes the attach command, which can be a few hundred messages after
   the handshake the sender waited for; the driver checks that the total is exact. Reports
   what it received, its CPU from the first message to the last and its peak RSS, and sends
   its error count to the sender's sync socket ("done"). */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: spread_pull <connect-to> <sync> <sockets> <count>\n");
        return 1;
    }
    long n = parse_count (argv[3], "sockets");
    (void) parse_count (argv[4], "count"); /* each socket's nominal share, for the usage */
    proc_init ();
    void *ctx = zctx ((int) n + 1);
    void **pulls = calloc ((size_t) n, sizeof *pulls);
    zmq_pollitem_t *items = calloc ((size_t) n, sizeof *items);
    long *got = calloc ((size_t) n, sizeof *got);
    uint64_t *last = calloc ((size_t) n, sizeof *last);
    for (long i = 0; i < n; i++) {
        pulls[i] = zsock (ctx, ZMQ_PULL);
        zsetint (pulls[i], ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
        zsetint (pulls[i], ZMQ_LINGER, 0, "ZMQ_LINGER");
        zcheck (zmq_connect (pulls[i], argv[1]), "zmq_connect");
        items[i].socket = pulls[i];
        items[i].events = ZMQ_POLLIN;
    }
    long errors = 0, received = 0, open = n;
    long long cpu0 = -1;
    double last_progress = now_us ();
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    while (open > 0) {
        int rc = zmq_poll (items, (int) n, 1000);
        zcheck (rc, "zmq_poll");
        if (rc == 0) {
            if (now_us () - last_progress > 120e6)
                die ("spread_pull", "no message for 120 s");
            continue;
        }
        last_progress = now_us ();
        for (long i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            while (zmq_msg_recv (&msg, pulls[i], ZMQ_DONTWAIT) >= 0) {
                if (cpu0 < 0)
                    cpu0 = cpu_us ();
                if (zmq_msg_size (&msg) < 8) {
                    errors++;
                    continue;
                }
                uint64_t seq = get_u64 (zmq_msg_data (&msg));
                if (seq == SEQ_END) {
                    items[i].events = 0;
                    open--;
                    break;
                }
                if (got[i] > 0 && seq <= last[i])
                    errors++;
                last[i] = seq;
                got[i]++;
                received++;
            }
        }
    }
    long long cpu1 = cpu_us ();
    zmq_msg_close (&msg);
    result ("sockets=%ld received=%ld errors=%ld cpu_us=%lld maxrss_kb=%ld", n, received, errors,
            cpu1 - (cpu0 < 0 ? cpu1 : cpu0), maxrss_kb ());

    send_done (ctx, argv[2], errors);
    for (long i = 0; i < n; i++)
        zmq_close (pulls[i]);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
