/* slow_sub <connect-to> <sync> <rcvhwm> <pause-us>
   The slow subscriber: one SUB (RCVHWM <rcvhwm>) that pauses <pause-us> µs after every
   100 messages. Counts what it receives and the messages it never saw (gaps in the
   sequence numbers: drops), and any message out of order (an error). At the end marker it
   sends "received=.. dropped=.. errors=.." to the publisher's sync socket. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: slow_sub <connect-to> <sync> <rcvhwm> <pause-us>\n");
        return 1;
    }
    int hwm = (int) parse_count (argv[3], "rcvhwm");
    long pause = parse_count (argv[4], "pause-us");
    proc_init ();
    void *ctx = zctx (4);
    void *sub = zsock (ctx, ZMQ_SUB);
    zsetint (sub, ZMQ_RCVHWM, hwm, "ZMQ_RCVHWM");
    zsetint (sub, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zsetint (sub, ZMQ_RCVTIMEO, 120000, "ZMQ_RCVTIMEO");
    zcheck (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0), "ZMQ_SUBSCRIBE");
    zcheck (zmq_connect (sub, argv[1]), "zmq_connect");
    uint64_t next = 0;
    long received = 0, dropped = 0, errors = 0;
    char buf[65536];
    for (;;) {
        int n = zmq_recv (sub, buf, sizeof buf, 0);
        if (n < 0)
            die ("slow_sub", zmq_strerror (zmq_errno ()));
        if (n < 8) {
            errors++;
            continue;
        }
        uint64_t seq = get_u64 (buf);
        if (seq == SEQ_END)
            break;
        if (seq < next)
            errors++;
        else
            dropped += (long) (seq - next);
        next = seq + 1;
        if (++received % 100 == 0 && pause > 0)
            usleep ((useconds_t) pause); /* the slow reader: deliberate, not a wait for an event */
    }
    void *sync = zsock (ctx, ZMQ_PUSH);
    zcheck (zmq_connect (sync, argv[2]), "zmq_connect sync");
    char msg[128];
    int len = snprintf (msg, sizeof msg, "received=%ld last_seq=%llu dropped_gaps=%ld errors=%ld", received,
                        (unsigned long long) next, dropped, errors);
    zcheck (zmq_send (sync, msg, (size_t) len, 0), "zmq_send done");
    result ("%s", msg);
    zmq_close (sync);
    zmq_close (sub);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
