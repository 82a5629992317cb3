/* slow_pub <bind-to> <sndhwm> <count> <size>
   The publisher of the slow-subscriber scenario: an XPUB (reports the subscription, so it
   starts once the subscriber is attached) with SNDHWM <sndhwm> sends <count> messages of
   <size> bytes as fast as it can to a subscriber that reads slowly (slow_sub); what does
   not fit under the HWM is dropped, as PUB does. Samples its RSS every 1,024 messages. Then
   it repeats the end marker (it may be dropped too) until the subscriber says done on the
   sync socket. Reports sent, RSS before and at its peak. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: slow_pub <bind-to> <sndhwm> <count> <size>\n");
        return 1;
    }
    int hwm = (int) parse_count (argv[2], "sndhwm");
    long count = parse_count (argv[3], "count");
    long size = parse_count (argv[4], "size");
    if (size < 8)
        size = 8;
    proc_init ();
    void *ctx = zctx (4);
    void *pub = zsock (ctx, ZMQ_XPUB);
    zsetint (pub, ZMQ_SNDHWM, hwm, "ZMQ_SNDHWM");
    zsetint (pub, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zsetint (pub, ZMQ_RCVTIMEO, 60000, "ZMQ_RCVTIMEO");
    zbind_print (pub, argv[1], "endpoint");
    void *sync = zsock (ctx, ZMQ_PULL);
    zsetint (sync, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zbind_print (sync, "tcp://127.0.0.1:*", "sync");
    char buf[256];
    if (zmq_recv (pub, buf, sizeof buf, 0) < 1 || buf[0] != 1)
        die ("slow_pub", "no subscription");

    char *body = calloc (1, (size_t) size);
    long rss0 = rss_kb (), peak = rss0;
    double t0 = now_us ();
    for (long i = 0; i < count; i++) {
        put_u64 (body, (uint64_t) i);
        zcheck (zmq_send (pub, body, (size_t) size, 0), "zmq_send");
        if ((i & 1023) == 0) {
            long r = rss_kb ();
            if (r > peak)
                peak = r;
        }
    }
    double t_sent = now_us ();
    long r = rss_kb ();
    if (r > peak)
        peak = r;
    /* the end marker, until the subscriber has it */
    put_u64 (body, SEQ_END);
    zmq_pollitem_t item = {sync, 0, ZMQ_POLLIN, 0};
    long markers = 0;
    double deadline = now_us () + 300e6;
    for (;;) {
        zcheck (zmq_send (pub, body, 8, 0), "zmq_send end");
        markers++;
        int rc = zmq_poll (&item, 1, 10);
        zcheck (rc, "zmq_poll");
        if (rc > 0)
            break;
        if (now_us () > deadline)
            die ("slow_pub", "the subscriber never finished");
    }
    int n = zmq_recv (sync, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    result ("hwm=%d sent=%ld size=%ld send_us=%.0f rss_before_kb=%ld rss_peak_kb=%ld maxrss_kb=%ld "
            "end_markers=%ld %s",
            hwm, count, size, t_sent - t0, rss0, peak, maxrss_kb (), markers, buf);
    free (body);
    zmq_close (sync);
    zmq_close (pub);
    zmq_ctx_term (ctx);
    return 0;
}
