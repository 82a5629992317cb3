/* dealer_cli <connect-to> <first-id> <sockets> <rounds>
   <sockets> DEALERs in this process for router_srv, routing ids <first-id>.. (put_peer_id).
   Each says "hello", waits for "go", then makes <rounds> round trips one after another
   (all sockets at once, driven by zmq_poll), checking that each reply is its own request.
   Ends with "done<errors>" on the first socket; reports CPU of the round-trip phase. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: dealer_cli <connect-to> <first-id> <sockets> <rounds>\n");
        return 1;
    }
    long first = parse_count (argv[2], "first-id");
    long n = parse_count (argv[3], "sockets");
    long rounds = parse_count (argv[4], "rounds");
    proc_init ();
    void *ctx = zctx ((int) n);
    void **d = calloc ((size_t) n, sizeof *d);
    zmq_pollitem_t *items = calloc ((size_t) n, sizeof *items);
    long *done_rounds = calloc ((size_t) n, sizeof *done_rounds);
    char *going = calloc ((size_t) n, 1);
    for (long i = 0; i < n; i++) {
        d[i] = zsock (ctx, ZMQ_DEALER);
        unsigned char rid[4];
        put_peer_id (rid, (uint32_t) (first + i));
        zcheck (zmq_setsockopt (d[i], ZMQ_ROUTING_ID, rid, 4), "ZMQ_ROUTING_ID");
        zsetint (d[i], ZMQ_LINGER, 5000, "ZMQ_LINGER");
        zcheck (zmq_connect (d[i], argv[1]), "zmq_connect");
        zcheck (zmq_send (d[i], "hello", 5, 0), "zmq_send hello");
        items[i].socket = d[i];
        items[i].events = ZMQ_POLLIN;
    }
    long errors = 0, waiting_go = n, open = n;
    long long cpu0 = 0;
    double last_progress = now_us ();
    char buf[64], req[16];
    while (open > 0) {
        int rc = zmq_poll (items, (int) n, 1000);
        zcheck (rc, "zmq_poll");
        if (rc == 0) {
            if (now_us () - last_progress > 300e6)
                die ("dealer_cli", "no reply for 300 s");
            continue;
        }
        last_progress = now_us ();
        for (long i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            int len;
            while ((len = zmq_recv (d[i], buf, sizeof buf, ZMQ_DONTWAIT)) >= 0) {
                if (!going[i]) {
                    if (len != 2 || memcmp (buf, "go", 2))
                        errors++;
                    going[i] = 1;
                    if (--waiting_go == 0)
                        cpu0 = cpu_us ();
                } else {
                    put_u64 (req, (uint64_t) (first + i));
                    put_u64 (req + 8, (uint64_t) done_rounds[i]);
                    if (len != 16 || memcmp (buf, req, 16))
                        errors++;
                    done_rounds[i]++;
                }
                if (done_rounds[i] == rounds) {
                    items[i].events = 0;
                    open--;
                    break;
                }
                put_u64 (req, (uint64_t) (first + i));
                put_u64 (req + 8, (uint64_t) done_rounds[i]);
                zcheck (zmq_send (d[i], req, 16, 0), "zmq_send request");
            }
        }
    }
    long long cpu1 = cpu_us ();
    int len = snprintf (buf, sizeof buf, "done%ld", errors);
    zcheck (zmq_send (d[0], buf, (size_t) len, 0), "zmq_send done");
    result ("sockets=%ld errors=%ld cpu_us=%lld maxrss_kb=%ld", n, errors, cpu1 - cpu0, maxrss_kb ());
    for (long i = 0; i < n; i++)
        zmq_close (d[i]);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
