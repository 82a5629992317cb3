/* remote_lat <host> <message-size> <roundtrip-count> [msg]
   The measuring side: binds its local exchange "EL" to the global queue "QG" and the global
   exchange "EG" to its local queue "QL" (both resolved through the name service at <host>),
   then times <roundtrip-count> round trips and prints half of one (as libzmq's remote_lat). */
#include "wiring_perf.h"

int main (int argc, char *argv[])
{
    int msg_mode = w_msg_mode (argc, argv, 4);
    if (msg_mode < 0) {
        printf ("usage: remote_lat <host> <message-size> <roundtrip-count> [msg]\n");
        return 1;
    }
    long size = parse_count (argv[2], "message-size");
    long roundtrips = parse_count (argv[3], "roundtrip-count");
    void *h = w_create (argv[1]);
    int eid = w_check (czmq_create_exchange (h, "EL", CZMQ_SCOPE_LOCAL, NULL), "czmq_create_exchange");
    w_check (czmq_create_queue (h, "QL", CZMQ_SCOPE_LOCAL, NULL), "czmq_create_queue");
    /* The queue side first: its subscription reaches EG long before the first reply. */
    w_check (czmq_bind_ex (h, "EG", "QL"), "czmq_bind");
    w_check (czmq_bind_ex (h, "EL", "QG"), "czmq_bind");
    void *buf = calloc (1, (size_t) size + 1);
    double start = now_us ();
    zmq_msg_t m;
    zmq_msg_init (&m);
    for (long i = 0; i < roundtrips; i++) {
        if (msg_mode) {
            w_send_msg (h, eid, (size_t) size);
            if (w_check (czmq_receive_msg (h, &m, -1), "czmq_receive_msg") != size)
                die ("message", "wrong size");
        } else {
            w_send (h, eid, buf, (size_t) size);
            if ((long) w_receive (h) != size)
                die ("message", "wrong size");
        }
    }
    zmq_msg_close (&m);
    double elapsed = now_us () - start;
    print_latency (size, roundtrips, elapsed);
    free (buf);
    czmq_destroy (h);
    return 0;
}
