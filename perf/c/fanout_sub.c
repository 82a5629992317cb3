/* fanout_sub <connect-to> <sync> <sockets> <count>
   Subscribers of the fan-out scenario, <sockets> SUB sockets in this process (RCVHWM 0,
   subscribed to everything) read with zmq_poll. Checks every message: its size, and that
   each socket sees 0, 1, ..., <count>-1 in order, then the end marker. Then reports its
   CPU from the first message to the last and its peak RSS, and sends its error count to
   the publisher's sync socket ("done"). */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: fanout_sub <connect-to> <sync> <sockets> <count>\n");
        return 1;
    }
    long n = parse_count (argv[3], "sockets");
    long count = parse_count (argv[4], "count");
    proc_init ();
    void *ctx = zctx ((int) n + 1);
    void **subs = calloc ((size_t) n, sizeof *subs);
    zmq_pollitem_t *items = calloc ((size_t) n, sizeof *items);
    uint64_t *next = calloc ((size_t) n, sizeof *next);
    char *ended = calloc ((size_t) n, 1);
    for (long i = 0; i < n; i++) {
        subs[i] = zsock (ctx, ZMQ_SUB);
        zsetint (subs[i], ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
        zsetint (subs[i], ZMQ_LINGER, 0, "ZMQ_LINGER");
        zcheck (zmq_setsockopt (subs[i], ZMQ_SUBSCRIBE, "", 0), "ZMQ_SUBSCRIBE");
        zcheck (zmq_connect (subs[i], argv[1]), "zmq_connect");
        items[i].socket = subs[i];
        items[i].events = ZMQ_POLLIN;
    }
    long errors = 0, deliveries = 0, open = n;
    long long cpu0 = -1;
    double last_progress = now_us ();
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    while (open > 0) {
        int rc = zmq_poll (items, (int) n, 1000);
        zcheck (rc, "zmq_poll");
        if (rc == 0) {
            if (now_us () - last_progress > 120e6)
                die ("fanout_sub", "no message for 120 s");
            continue;
        }
        last_progress = now_us ();
        for (long i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            while (zmq_msg_recv (&msg, subs[i], ZMQ_DONTWAIT) >= 0) {
                if (cpu0 < 0)
                    cpu0 = cpu_us ();
                if (zmq_msg_size (&msg) < 8) {
                    errors++;
                    continue;
                }
                uint64_t seq = get_u64 (zmq_msg_data (&msg));
                if (seq == SEQ_END) {
                    if (next[i] != (uint64_t) count)
                        errors++;
                    if (!ended[i]) {
                        ended[i] = 1;
                        open--;
                    }
                    items[i].events = 0;
                    break;
                }
                if (seq != next[i])
                    errors++;
                next[i] = seq + 1;
                deliveries++;
            }
        }
    }
    long long cpu1 = cpu_us ();
    zmq_msg_close (&msg);
    result ("sockets=%ld deliveries=%ld errors=%ld cpu_us=%lld maxrss_kb=%ld", n, deliveries, errors,
            cpu1 - (cpu0 < 0 ? cpu1 : cpu0), maxrss_kb ());

    send_done (ctx, argv[2], errors);
    for (long i = 0; i < n; i++)
        zmq_close (subs[i]);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
