/* inproc_lat <message-size> <roundtrip-count>
   local_lat and remote_lat in one process over inproc: a thread echoes (REP), the main
   thread (REQ) times the round trips. */
#include <zmq.h>
#include "perf_util.h"

static long size, roundtrips;
static void *ctx;

static void echo (void *arg)
{
    (void) arg;
    void *s = zmq_socket (ctx, ZMQ_REP);
    if (!s || zmq_connect (s, "inproc://lat_test") != 0)
        die ("echo", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    for (long i = 0; i < roundtrips; i++) {
        if (zmq_msg_recv (&msg, s, 0) < 0 || zmq_msg_send (&msg, s, 0) < 0)
            die ("echo", zmq_strerror (zmq_errno ()));
    }
    zmq_msg_close (&msg);
    zmq_close (s);
}

int main (int argc, char *argv[])
{
    if (argc != 3) {
        printf ("usage: inproc_lat <message-size> <roundtrip-count>\n");
        return 1;
    }
    size = parse_count (argv[1], "message-size");
    roundtrips = parse_count (argv[2], "roundtrip-count");
    ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_REQ);
    if (!s || zmq_bind (s, "inproc://lat_test") != 0)
        die ("req", zmq_strerror (zmq_errno ()));
    void *t = zmq_threadstart (echo, NULL);
    zmq_msg_t msg;
    zmq_msg_init_size (&msg, (size_t) size);
    memset (zmq_msg_data (&msg), 0, (size_t) size);
    void *watch = zmq_stopwatch_start ();
    for (long i = 0; i < roundtrips; i++) {
        if (zmq_msg_send (&msg, s, 0) < 0 || zmq_msg_recv (&msg, s, 0) < 0)
            die ("req", zmq_strerror (zmq_errno ()));
        if ((long) zmq_msg_size (&msg) != size)
            die ("message", "wrong size");
    }
    unsigned long elapsed = zmq_stopwatch_stop (watch);
    zmq_msg_close (&msg);
    zmq_threadclose (t);
    print_latency (size, roundtrips, (double) elapsed);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
