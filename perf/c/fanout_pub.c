/* fanout_pub <bind-to> <subscribers> <sub-processes> <count> <size>
   The publisher of the fan-out scenario: an XPUB (a PUB that also reports subscriptions,
   XPUB_VERBOSE so each subscriber's arrives) with SNDHWM 0, and a PULL for the subscribers'
   "done". Prints "endpoint" and "sync", waits until <subscribers> subscriptions have arrived
   (so every subscriber is attached before the first message), sends <count> messages of
   <size> bytes numbered 0.. in their first 8 bytes, then an end marker (SEQ_END), and stops
   the clock when all <sub-processes> have said done: every subscriber has received and
   checked every message. Reports elapsed time, its CPU over that span and its peak RSS. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 6) {
        fprintf (stderr, "usage: fanout_pub <bind-to> <subscribers> <sub-processes> <count> <size>\n");
        return 1;
    }
    long subs = parse_count (argv[2], "subscribers");
    long procs = parse_count (argv[3], "sub-processes");
    long count = parse_count (argv[4], "count");
    long size = parse_count (argv[5], "size");
    if (size < 8)
        size = 8;
    proc_init ();
    void *ctx = zctx (4);
    void *pub = zsock (ctx, ZMQ_XPUB);
    zsetint (pub, ZMQ_SNDHWM, 0, "ZMQ_SNDHWM");
    zsetint (pub, ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
    zsetint (pub, ZMQ_XPUB_VERBOSE, 1, "ZMQ_XPUB_VERBOSE");
    zsetint (pub, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zbind_print (pub, argv[1], "endpoint");
    void *sync = zsock (ctx, ZMQ_PULL);
    zsetint (sync, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zbind_print (sync, "tcp://127.0.0.1:*", "sync");

    /* every subscriber attached: one subscription message each */
    zsetint (pub, ZMQ_RCVTIMEO, 120000, "ZMQ_RCVTIMEO");
    char buf[256];
    double t_start = now_us ();
    for (long seen = 0; seen < subs;) {
        int n = zmq_recv (pub, buf, sizeof buf, 0);
        if (n < 0)
            die ("waiting for subscriptions", zmq_strerror (zmq_errno ()));
        if (n >= 1 && buf[0] == 1)
            seen++;
    }
    double t_subscribed = now_us ();

    char *body = calloc (1, (size_t) size);
    long long cpu0 = cpu_us ();
    double t0 = now_us ();
    for (long i = 0; i < count; i++) {
        put_u64 (body, (uint64_t) i);
        zcheck (zmq_send (pub, body, (size_t) size, 0), "zmq_send");
    }
    put_u64 (body, SEQ_END);
    zcheck (zmq_send (pub, body, 8, 0), "zmq_send end");
    double t_sent = now_us ();

    long errors = wait_done (sync, procs, "waiting for the subscribers' done");
    double t1 = now_us ();
    long long cpu1 = cpu_us ();
    result ("subscribers=%ld count=%ld size=%ld elapsed_us=%.0f send_us=%.0f subscribe_us=%.0f "
            "cpu_us=%lld maxrss_kb=%ld errors=%ld",
            subs, count, size, t1 - t0, t_sent - t0, t_subscribed - t_start, cpu1 - cpu0,
            maxrss_kb (), errors);
    free (body);
    zmq_close (sync);
    zmq_close (pub);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
