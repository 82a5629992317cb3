/* fanin_pull <bind-to> <senders> <sender-processes> <count>
   The PULL of the fan-in scenario, and a ROUTER ("sync") for the senders' processes. Each
   PUSH (fanin_push) first sends a hello (its index, seq UINT32_MAX); when all <senders> are
   there and every process has said "ready" on the sync socket, it answers "go" and starts
   the clock, then receives <senders> x <count> messages, checking that each sender's
   sequence numbers arrive in order. Reports messages, elapsed time and its CPU. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: fanin_pull <bind-to> <senders> <sender-processes> <count>\n");
        return 1;
    }
    long senders = parse_count (argv[2], "senders");
    long procs = parse_count (argv[3], "sender-processes");
    long count = parse_count (argv[4], "count");
    proc_init ();
    void *ctx = zctx (4);
    void *pull = zsock (ctx, ZMQ_PULL);
    zsetint (pull, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zsetint (pull, ZMQ_RCVTIMEO, 300000, "ZMQ_RCVTIMEO");
    zbind_print (pull, argv[1], "endpoint");
    void *sync = zsock (ctx, ZMQ_ROUTER);
    zsetint (sync, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zsetint (sync, ZMQ_RCVTIMEO, 300000, "ZMQ_RCVTIMEO");
    zbind_print (sync, "tcp://127.0.0.1:*", "sync");

    uint32_t *next = calloc ((size_t) senders, sizeof *next);
    char *hello = calloc ((size_t) senders, 1);
    long errors = 0;
    char buf[65536];
    for (long seen = 0; seen < senders;) {
        int len = zmq_recv (pull, buf, sizeof buf, 0);
        if (len < 0)
            die ("waiting for hellos", zmq_strerror (zmq_errno ()));
        uint32_t k = len >= 8 ? get_u32 (buf) : UINT32_MAX;
        if (k >= senders || get_u32 (buf + 4) != UINT32_MAX) {
            errors++;
            continue;
        }
        if (!hello[k]) {
            hello[k] = 1;
            seen++;
        }
    }
    zmq_msg_t *ids = calloc ((size_t) procs, sizeof *ids);
    for (long p = 0; p < procs; p++) {
        zmq_msg_init (&ids[p]);
        if (zmq_msg_recv (&ids[p], sync, 0) < 0 || zmq_recv (sync, buf, sizeof buf, 0) < 0)
            die ("waiting for ready", zmq_strerror (zmq_errno ()));
    }
    long long cpu0 = cpu_us ();
    double t0 = now_us ();
    for (long p = 0; p < procs; p++) {
        zcheck (zmq_msg_send (&ids[p], sync, ZMQ_SNDMORE), "zmq_send id");
        zcheck (zmq_send (sync, "go", 2, 0), "zmq_send go");
    }
    long total = senders * count;
    for (long i = 0; i < total; i++) {
        int len = zmq_recv (pull, buf, sizeof buf, 0);
        if (len < 0)
            die ("receiving", zmq_strerror (zmq_errno ()));
        uint32_t k = len >= 8 ? get_u32 (buf) : UINT32_MAX;
        if (k >= senders || get_u32 (buf + 4) != next[k]) {
            errors++;
            if (k < senders)
                next[k] = get_u32 (buf + 4) + 1;
            continue;
        }
        next[k]++;
    }
    double t1 = now_us ();
    long long cpu1 = cpu_us ();
    result ("senders=%ld count=%ld messages=%ld elapsed_us=%.0f cpu_us=%lld maxrss_kb=%ld errors=%ld",
            senders, count, total, t1 - t0, cpu1 - cpu0, maxrss_kb (), errors);
    for (long p = 0; p < procs; p++)
        zmq_msg_close (&ids[p]);
    zmq_close (sync);
    zmq_close (pull);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
