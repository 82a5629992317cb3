/* remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]
   Connects a REQ socket, does <roundtrip-count> request/reply round trips and prints the
   one-way latency (elapsed / (2 * roundtrips)). */
#include <zmq.h>
#include "perf_curve.h"
#include "perf_tls.h"

int main (int argc, char *argv[])
{
    if (argc != 4 && argc != 5) {
        printf ("usage: remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]\n");
        return 1;
    }
    const char *connect_to = argv[1];
    long size = parse_count (argv[2], "message-size");
    long roundtrips = parse_count (argv[3], "roundtrip-count");

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REQ);
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    if (curve_arg (argc, argv))
        curve_setup (s, 0);
    tls_setup (s, 0);
    if (zmq_connect (s, connect_to) != 0)
        die ("zmq_connect", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    zmq_msg_init_size (&msg, (size_t) size);
    memset (zmq_msg_data (&msg), 0, (size_t) size);
    void *watch = zmq_stopwatch_start ();
    for (long i = 0; i < roundtrips; i++) {
        if (zmq_msg_send (&msg, s, 0) < 0)
            die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        if (zmq_msg_recv (&msg, s, 0) < 0)
            die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
        if ((long) zmq_msg_size (&msg) != size)
            die ("message", "wrong size");
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    print_latency (size, roundtrips, (double) elapsed);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
