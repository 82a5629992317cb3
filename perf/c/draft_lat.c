/* draft_lat local|remote <endpoint> <message-size> <roundtrip-count> <pattern>
   Round-trip latency of a socket pair, the classic pair beside the thread-safe draft ones:
   pattern reqrep (REQ/REP), reqrep-poll (REQ/REP, both ends waiting in zmq_poll before each
   receive, as event loops do), clientserver (CLIENT/SERVER) or peer (PEER/PEER). `local` binds
   and echoes each message back to its sender; `remote` connects, does the round trips and
   prints libzmq's latency lines (one-way: elapsed / (2 * round trips)). Built against oxmq
   only: Debian's libzmq has no draft API. */
#define ZMQ_BUILD_DRAFT_API
#include <zmq.h>
#include "perf_util.h"

static int socket_type (const char *pattern, int local)
{
    if (!strcmp (pattern, "reqrep") || !strcmp (pattern, "reqrep-poll"))
        return local ? ZMQ_REP : ZMQ_REQ;
    if (!strcmp (pattern, "clientserver"))
        return local ? ZMQ_SERVER : ZMQ_CLIENT;
    if (!strcmp (pattern, "peer"))
        return ZMQ_PEER;
    die ("arguments", "pattern is reqrep, reqrep-poll, clientserver or peer");
    return -1;
}

/* With `use_poll`, waits in zmq_poll until `s` has input. */
static void wait_input (void *s, int use_poll)
{
    if (!use_poll)
        return;
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    if (zmq_poll (&item, 1, -1) != 1)
        die ("zmq_poll", zmq_strerror (zmq_errno ()));
}

int main (int argc, char *argv[])
{
    if (argc != 6 || (strcmp (argv[1], "local") && strcmp (argv[1], "remote"))) {
        printf ("usage: draft_lat local|remote <endpoint> <message-size> <roundtrip-count> "
                "reqrep|reqrep-poll|clientserver|peer\n");
        return 1;
    }
    int local = !strcmp (argv[1], "local");
    long size = parse_count (argv[3], "message-size");
    long roundtrips = parse_count (argv[4], "roundtrip-count");
    int peer = !strcmp (argv[5], "peer");
    int use_poll = !strcmp (argv[5], "reqrep-poll");
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, socket_type (argv[5], local));
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (local) {
        if (zmq_bind (s, argv[2]) != 0)
            die ("zmq_bind", zmq_strerror (zmq_errno ()));
        /* A received message keeps its sender's routing id (SERVER, PEER): sent back as is. */
        for (long i = 0; i < roundtrips; i++) {
            wait_input (s, use_poll);
            if (zmq_msg_recv (&msg, s, 0) < 0)
                die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
            if (zmq_msg_send (&msg, s, 0) < 0)
                die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        }
    } else {
        uint32_t rid = 0;
        if (peer) {
            rid = zmq_connect_peer (s, argv[2]);
            if (rid == 0)
                die ("zmq_connect_peer", zmq_strerror (zmq_errno ()));
        } else if (zmq_connect (s, argv[2]) != 0)
            die ("zmq_connect", zmq_strerror (zmq_errno ()));
        void *watch = zmq_stopwatch_start ();
        for (long i = 0; i < roundtrips; i++) {
            if (zmq_msg_init_size (&msg, (size_t) size) != 0)
                die ("zmq_msg_init_size", zmq_strerror (zmq_errno ()));
            if (size)
                memset (zmq_msg_data (&msg), 0, (size_t) size);
            if (peer && zmq_msg_set_routing_id (&msg, rid) != 0)
                die ("zmq_msg_set_routing_id", zmq_strerror (zmq_errno ()));
            if (zmq_msg_send (&msg, s, 0) < 0)
                die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
            wait_input (s, use_poll);
            if (zmq_msg_recv (&msg, s, 0) < 0)
                die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
            if ((long) zmq_msg_size (&msg) != size)
                die ("message", "wrong size");
        }
        print_latency (size, roundtrips, (double) zmq_stopwatch_stop (watch));
    }
    zmq_msg_close (&msg);
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
