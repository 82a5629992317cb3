/* draft_lat local|remote <endpoint> <message-size> <roundtrip-count> <pattern>
   Round-trip latency of a socket pair, the classic pair beside the thread-safe draft ones:
   pattern reqrep (REQ/REP), reqrep-poll (REQ/REP, both ends waiting in zmq_poll before each
   receive, as event loops do), clientserver (CLIENT/SERVER) or peer (PEER/PEER). `local` binds
   and echoes each message back to its sender; `remote` connects, does the round trips and
   prints libzmq's latency lines (one-way: elapsed / (2 * round trips)). Built against oxmq
   only: Debian's libzmq has no draft API (reqrep and reqrep-poll call no draft function, so
   the binary runs on libzmq through LD_LIBRARY_PATH). */
#include "draft_util.h"

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

/* Receives into `msg`, first waiting in zmq_poll with `use_poll`. */
static void receive (void *s, zmq_msg_t *msg, int use_poll)
{
    zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
    if (use_poll && zmq_poll (&item, 1, -1) != 1)
        die ("zmq_poll", zmq_strerror (zmq_errno ()));
    if (zmq_msg_recv (msg, s, 0) < 0)
        die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
}

int main (int argc, char *argv[])
{
    struct draft_run r = draft_open (argc, argv,
                                     "draft_lat local|remote <endpoint> <message-size> "
                                     "<roundtrip-count> reqrep|reqrep-poll|clientserver|peer",
                                     socket_type);
    int use_poll = !strcmp (r.pattern, "reqrep-poll");
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (r.local) {
        /* A received message keeps its sender's routing id (SERVER, PEER): sent back as is. */
        for (long i = 0; i < r.count; i++) {
            receive (r.socket, &msg, use_poll);
            if (zmq_msg_send (&msg, r.socket, 0) < 0)
                die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        }
    } else {
        void *watch = zmq_stopwatch_start ();
        for (long i = 0; i < r.count; i++) {
            draft_fill (&r, &msg);
            if (zmq_msg_send (&msg, r.socket, 0) < 0)
                die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
            receive (r.socket, &msg, use_poll);
            if ((long) zmq_msg_size (&msg) != r.size)
                die ("message", "wrong size");
        }
        print_latency (r.size, r.count, (double) zmq_stopwatch_stop (watch));
    }
    zmq_msg_close (&msg);
    draft_close (&r);
    return 0;
}
