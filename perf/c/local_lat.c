/* local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]
   Binds a REP socket and echoes <roundtrip-count> messages. */
#include <zmq.h>
#include "perf_curve.h"
#include "perf_tls.h"

int main (int argc, char *argv[])
{
    if (argc != 4 && argc != 5) {
        printf ("usage: local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]\n");
        return 1;
    }
    const char *bind_to = argv[1];
    long size = parse_count (argv[2], "message-size");
    long roundtrips = parse_count (argv[3], "roundtrip-count");

    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REP);
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    if (curve_arg (argc, argv))
        curve_setup (s, 1);
    tls_setup (s, 1);
    if (zmq_bind (s, bind_to) != 0)
        die ("zmq_bind", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    for (long i = 0; i < roundtrips; i++) {
        if (zmq_msg_recv (&msg, s, 0) < 0)
            die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
        if ((long) zmq_msg_size (&msg) != size)
            die ("message", "wrong size");
        if (zmq_msg_send (&msg, s, 0) < 0)
            die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
    }
    zmq_msg_close (&msg);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
