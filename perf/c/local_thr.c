/* local_thr <bind-to> <message-size> <message-count> [<enable_curve>]
   Binds a PULL socket, receives <message-count> messages and prints the throughput, timed
   from the first message to the last (libzmq's classic tool, same command line and output). */
#include <zmq.h>
#include "perf_curve.h"
#include "perf_tls.h"

int main (int argc, char *argv[])
{
    if (argc != 4 && argc != 5) {
        printf ("usage: local_thr <bind-to> <message-size> <message-count> [<enable_curve>]\n");
        return 1;
    }
    const char *bind_to = argv[1];
    long size = parse_count (argv[2], "message-size");
    long count = parse_count (argv[3], "message-count");

    void *ctx = zmq_ctx_new ();
    if (!ctx)
        die ("zmq_ctx_new", zmq_strerror (zmq_errno ()));
    void *s = zmq_socket (ctx, ZMQ_PULL);
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    if (curve_arg (argc, argv))
        curve_setup (s, 1);
    tls_setup (s, 1);
    if (zmq_bind (s, bind_to) != 0)
        die ("zmq_bind", zmq_strerror (zmq_errno ()));

    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (zmq_msg_recv (&msg, s, 0) < 0)
        die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
    if ((long) zmq_msg_size (&msg) != size)
        die ("message", "wrong size");
    void *watch = zmq_stopwatch_start ();
    for (long i = 1; i < count; i++) {
        if (zmq_msg_recv (&msg, s, 0) < 0)
            die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
        if ((long) zmq_msg_size (&msg) != size)
            die ("message", "wrong size");
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    /* libzmq's formula: count over the time of the last count-1 messages */
    print_throughput (size, count, (double) elapsed);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
