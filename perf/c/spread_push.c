/* spread_push <bind-to> <peers> <peer-processes> <count> <size>
   The sender of the spread scenario: one PUSH (SNDHWM 0) load-balancing over <peers> PULL
   sockets in other processes (spread_pull), and a PULL for their processes' "done". Prints
   "endpoint" and "sync", waits until a monitor has seen <peers> handshakes (every peer
   connected; each joins the round robin when this thread takes its attach command), sends
   <peers> x <count> messages of <size> bytes numbered 0.. in their first 8 bytes, then one
   end marker (SEQ_END) per peer, and stops the clock when all <peer-processes> have said
   done: every peer has received and checked its share. Reports elapsed time, its CPU over
   that span and its peak RSS. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 6) {
        fprintf (stderr, "usage: spread_push <bind-to> <peers> <peer-processes> <count> <size>\n");
        return 1;
    }
    long peers = parse_count (argv[2], "peers");
    long procs = parse_count (argv[3], "peer-processes");
    long count = parse_count (argv[4], "count");
    long size = parse_count (argv[5], "size");
    if (size < 8)
        size = 8;
    proc_init ();
    void *ctx = zctx (4);
    void *push = zsock (ctx, ZMQ_PUSH);
    zsetint (push, ZMQ_SNDHWM, 0, "ZMQ_SNDHWM");
    zsetint (push, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zcheck (zmq_socket_monitor (push, "inproc://spread-monitor", ZMQ_EVENT_HANDSHAKE_SUCCEEDED),
            "zmq_socket_monitor");
    void *mon = zsock (ctx, ZMQ_PAIR);
    zsetint (mon, ZMQ_RCVTIMEO, 120000, "ZMQ_RCVTIMEO");
    zsetint (mon, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zcheck (zmq_connect (mon, "inproc://spread-monitor"), "zmq_connect monitor");
    zbind_print (push, argv[1], "endpoint");
    void *sync = zsock (ctx, ZMQ_PULL);
    zsetint (sync, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zbind_print (sync, "tcp://127.0.0.1:*", "sync");

    /* every peer attached: one handshake each (an event is two frames) */
    char buf[256];
    double t_start = now_us ();
    for (long seen = 0; seen < peers;) {
        int n = zmq_recv (mon, buf, sizeof buf, 0);
        if (n < 0)
            die ("waiting for the peers' handshakes", zmq_strerror (zmq_errno ()));
        if (n >= 2 && ((unsigned char) buf[0] | (unsigned char) buf[1] << 8) == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            seen++;
        if (zmq_recv (mon, buf, sizeof buf, 0) < 0)
            die ("monitor event", zmq_strerror (zmq_errno ()));
    }
    double t_attached = now_us ();

    char *body = calloc (1, (size_t) size);
    long total = peers * count;
    long long cpu0 = cpu_us ();
    double t0 = now_us ();
    for (long i = 0; i < total; i++) {
        put_u64 (body, (uint64_t) i);
        zcheck (zmq_send (push, body, (size_t) size, 0), "zmq_send");
    }
    put_u64 (body, SEQ_END);
    for (long i = 0; i < peers; i++)
        zcheck (zmq_send (push, body, 8, 0), "zmq_send end");
    double t_sent = now_us ();

    long errors = wait_done (sync, procs, "waiting for the peers' done");
    double t1 = now_us ();
    long long cpu1 = cpu_us ();
    result ("peers=%ld count=%ld size=%ld messages=%ld elapsed_us=%.0f send_us=%.0f attach_us=%.0f "
            "cpu_us=%lld maxrss_kb=%ld errors=%ld",
            peers, count, size, total, t1 - t0, t_sent - t0, t_attached - t_start, cpu1 - cpu0,
            maxrss_kb (), errors);
    free (body);
    zmq_close (mon);
    zmq_close (sync);
    zmq_close (push);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
