/* draft_thr local|remote <endpoint> <message-size> <message-count> <pattern>
   One-way throughput of a socket pair, the classic pair beside the thread-safe draft ones:
   pattern pushpull (PUSH -> PULL), clientserver (CLIENT -> SERVER) or peer (PEER -> PEER,
   addressed by the routing id zmq_connect_peer returns). `local` binds and receives, printing
   libzmq's throughput lines (timed from the first message to the last); `remote` connects and
   sends. Built against oxmq only: Debian's libzmq has no draft API. */
#include "draft_util.h"

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
    struct draft_run r = draft_open (argc, argv,
                                     "draft_thr local|remote <endpoint> <message-size> "
                                     "<message-count> pushpull|clientserver|peer",
                                     socket_type);
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    if (r.local) {
        void *watch = NULL;
        for (long i = 0; i < r.count; i++) {
            if (zmq_msg_recv (&msg, r.socket, 0) < 0)
                die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
            if ((long) zmq_msg_size (&msg) != r.size)
                die ("message", "wrong size");
            if (i == 0)
                watch = zmq_stopwatch_start ();
        }
        /* libzmq's formula: count over the time of the last count-1 messages */
        print_throughput (r.size, r.count, (double) zmq_stopwatch_stop (watch));
    } else {
        for (long i = 0; i < r.count; i++) {
            draft_fill (&r, &msg);
            if (zmq_msg_send (&msg, r.socket, 0) < 0)
                die ("zmq_msg_send", zmq_strerror (zmq_errno ()));
        }
    }
    zmq_msg_close (&msg);
    draft_close (&r);
    return 0;
}
