/* msg_cost <message-size> <count>
   The application thread's cost per call, with no connection and no I/O thread involved:
     send-copy   zmq_send of a <message-size> buffer on a PUB with no subscriber (the body is
                 copied into a message, which the PUB then drops)
     send-msg    zmq_msg_init_size, 8 bytes written, zmq_msg_send on the same PUB
     recv        zmq_msg_recv from an inproc PULL with 1,000 messages queued (their sending
                 is not timed)
   Each is the best of 7 runs of <count> calls, in ns per call. Built against both libraries
   (build/oxmq, build/libzmq) like the other tools. */
#include <zmq.h>
#include <string.h>
#include "perf_util.h"

#define BATCH 1000
#define RUNS 7

static void check (int rc, const char *what)
{
    if (rc < 0)
        die (what, zmq_strerror (zmq_errno ()));
}

int main (int argc, char *argv[])
{
    if (argc != 3) {
        printf ("usage: msg_cost <message-size> <count>\n");
        return 1;
    }
    long size = parse_count (argv[1], "message-size");
    long count = parse_count (argv[2], "message-count");
    if (count < BATCH)
        count = BATCH;
    count -= count % BATCH;
    char *buf = calloc (1, (size_t) size + 8);
    if (!buf)
        die ("calloc", "out of memory");

    void *ctx = zmq_ctx_new ();
    void *pub = zmq_socket (ctx, ZMQ_PUB);
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    if (!ctx || !pub || !pull || !push)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    int zero = 0;
    check (zmq_setsockopt (pull, ZMQ_RCVHWM, &zero, sizeof zero), "ZMQ_RCVHWM");
    check (zmq_setsockopt (push, ZMQ_SNDHWM, &zero, sizeof zero), "ZMQ_SNDHWM");
    check (zmq_bind (pub, "inproc://msg_cost_pub"), "zmq_bind");
    check (zmq_bind (pull, "inproc://msg_cost_pull"), "zmq_bind");
    check (zmq_connect (push, "inproc://msg_cost_pull"), "zmq_connect");

    double best_copy = 1e300, best_msg = 1e300, best_recv = 1e300;
    zmq_msg_t m;
    zmq_msg_init (&m);
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_us ();
        for (long i = 0; i < count; i++)
            check (zmq_send (pub, buf, (size_t) size, 0), "zmq_send");
        double t = (now_us () - t0) * 1e3 / count;
        if (t < best_copy)
            best_copy = t;

        t0 = now_us ();
        for (long i = 0; i < count; i++) {
            zmq_msg_t s;
            check (zmq_msg_init_size (&s, (size_t) size), "zmq_msg_init_size");
            memset (zmq_msg_data (&s), 1, size < 8 ? (size_t) size : 8);
            check (zmq_msg_send (&s, pub, 0), "zmq_msg_send");
        }
        t = (now_us () - t0) * 1e3 / count;
        if (t < best_msg)
            best_msg = t;

        double spent = 0;
        for (long b = 0; b < count / BATCH; b++) {
            for (int i = 0; i < BATCH; i++)
                check (zmq_send (push, buf, (size_t) size, 0), "zmq_send");
            t0 = now_us ();
            for (int i = 0; i < BATCH; i++)
                if (zmq_msg_recv (&m, pull, 0) != (int) size)
                    die ("zmq_msg_recv", "wrong size");
            spent += now_us () - t0;
        }
        t = spent * 1e3 / count;
        if (t < best_recv)
            best_recv = t;
    }
    printf ("message size: %ld [B]\n", size);
    printf ("send-copy: %.1f [ns/call]\n", best_copy);
    printf ("send-msg: %.1f [ns/call]\n", best_msg);
    printf ("recv: %.1f [ns/call]\n", best_recv);
    zmq_msg_close (&m);
    zmq_close (push);
    zmq_close (pull);
    zmq_close (pub);
    zmq_ctx_term (ctx);
    free (buf);
    return 0;
}
