/* draft_thr local|remote <endpoint> <message-size> <message-count> <pattern>
   One-way throughput of a socket pair, the classic pair beside the thread-safe draft ones:
   pattern pushpull (PUSH -> PULL), clientserver (CLIENT -> SERVER) or peer (PEER -> PEER,
   addressed by the routing id zmq_connect_peer returns). `local` binds and receives, printing
   libzmq's throughput lines (timed from the first message to the last); `remote` connects and
   sends. Built against oxmq only: Debian's libzmq has no draft API. */
#define ZMQ_BUILD_DRAFT_API
#include <zmq.h>
#include "perf_util.h"

static int socket_type (const char *pattern, int local)
{
    if (!strcmp (pattern, "pushpull"))
        return local ? ZMQ_PULL : ZMQ_PUSH;
    if (!strcmp (pattern, "clientserver"))
        return local ? ZMQ_SERVER : ZMQ_CLIENT;
    if (!strcmp (pattern, "peer"))
        return ZMQ_PEER;
    die ("arguments", "pattern is pushpull, clientserver or peer");
    return -1;
}

int main (int argc, char *argv[])
{
    if (argc != 6 || (strcmp (argv[1], "local") && strcmp (argv[1], "remote"))) {
        printf ("usage: draft_thr local|remote <endpoint> <message-size> <message-count> "
                "pushpull|clientserver|peer\n");
        return 1;
    }
    int local = !strcmp (argv[1], "local");
    long size = parse_count (argv[3], "message-size");
    long count = parse_count (argv[4], "message-count");
    int peer = !strcmp (argv[5], "peer");
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, socket_type (argv[5], local));
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (local) {
        if (zmq_bind (s, argv[2]) != 0)
            die ("zmq_bind", zmq_strerror (zmq_errno ()));
        void *watch = NULL;
        for (long i = 0; i < count; i++) {
            if (zmq_msg_recv (&msg, s, 0) < 0)
                die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
            if ((long) zmq_msg_size (&msg) != size)
                die ("message", "wrong size");
            if (i == 0)
                watch = zmq_stopwatch_start ();
        }
        print_throughput (size, count, (double) zmq_stopwatch_stop (watch));
    } else {
        uint32_t rid = 0;
        if (peer) {
            rid = zmq_connect_peer (s, argv[2]);
            if (rid == 0)
                die ("zmq_connect_peer", zmq_strerror (zmq_errno ()));
        } else if (zmq_connect (s, argv[2]) != 0)
            die ("zmq_connect", zmq_strerror (zmq_errno ()));
        for (long i = 0; i < count; i++) {
            if (zmq_msg_init_size (&msg, (size_t) size) != 0)
                die ("zmq_msg_init_size", zmq_strerror (zmq_errno ()));
            if (size)
                memset (zmq_msg_data (&msg), 0, (size_t) size);
            if (peer && zmq_msg_set_routing_id (&msg, rid) != 0)
                die ("zmq_msg_set_routing_id", zmq_strerror (zmq_errno ()));
            if (zmq_msg_send (&msg, s, 0) < 0)
                die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        }
    }
    zmq_msg_close (&msg);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
