/* remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]
   Connects a PUSH socket and sends <message-count> messages of <message-size> bytes, then
   waits (linger) until they are all delivered. */
#include <zmq.h>
#include "perf_curve.h"
#include "perf_tls.h"

int main (int argc, char *argv[])
{
    if (argc != 4 && argc != 5) {
        printf ("usage: remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]\n");
        return 1;
    }
    const char *connect_to = argv[1];
    long size = parse_count (argv[2], "message-size");
    long count = parse_count (argv[3], "message-count");

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    if (curve_arg (argc, argv))
        curve_setup (s, 0);
    tls_setup (s, 0);
    if (zmq_connect (s, connect_to) != 0)
        die ("zmq_connect", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    for (long i = 0; i < count; i++) {
        if (zmq_msg_init_size (&msg, (size_t) size) != 0)
            die ("zmq_msg_init_size", zmq_strerror (zmq_errno ()));
        if (zmq_msg_send (&msg, s, 0) < 0)
            die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        zmq_msg_close (&msg);
    }
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
