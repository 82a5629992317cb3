/* inproc_thr <message-size> <message-count>
   local_thr and remote_thr in one process over inproc: a thread sends, the main thread
   receives and times. */
#include <zmq.h>
#include "perf_util.h"

static long size, count;
static void *ctx;

static void sender (void *arg)
{
    (void) arg;
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    if (!s || zmq_connect (s, "inproc://thr_test") != 0)
        die ("sender", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    for (long i = 0; i < count; i++) {
        zmq_msg_init_size (&msg, (size_t) size);
        if (zmq_msg_send (&msg, s, 0) < 0)
            die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        zmq_msg_close (&msg);
    }
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    if (argc != 3) {
        printf ("usage: inproc_thr <message-size> <message-count>\n");
        return 1;
    }
    size = parse_count (argv[1], "message-size");
    count = parse_count (argv[2], "message-count");
    ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PULL);
    if (!s || zmq_bind (s, "inproc://thr_test") != 0)
        die ("receiver", zmq_strerror (zmq_errno ()));
    void *t = zmq_threadstart (sender, NULL);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (zmq_msg_recv (&msg, s, 0) < 0)
        die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
    void *watch = zmq_stopwatch_start ();
    for (long i = 1; i < count; i++) {
        if (zmq_msg_recv (&msg, s, 0) < 0)
            die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
        if ((long) zmq_msg_size (&msg) != size)
            die ("message", "wrong size");
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    zmq_threadclose (t);
    /* libzmq's formula: count over the time of the last count-1 messages */
    print_throughput (size, count, (double) elapsed);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
