/* local_lat <host> <location> <message-size> <roundtrip-count> [msg]
   The echo side: creates the global queue "QG" and the global exchange "EG" at <location>
   ("" picks addresses) and sends back every message it receives on EG. */
#include "wiring_perf.h"

int main (int argc, char *argv[])
{
    int msg_mode = w_msg_mode (argc, argv, 5);
    if (msg_mode < 0) {
        printf ("usage: local_lat <host> <location> <message-size> <roundtrip-count> [msg]\n");
        return 1;
    }
    long size = parse_count (argv[3], "message-size");
    long roundtrips = parse_count (argv[4], "roundtrip-count");
    void *h = w_create (argv[1]);
    w_check (czmq_create_queue (h, "QG", CZMQ_SCOPE_GLOBAL, argv[2]), "czmq_create_queue");
    int eid = w_check (czmq_create_exchange (h, "EG", CZMQ_SCOPE_GLOBAL, argv[2]), "czmq_create_exchange");
    printf ("ready\n");
    fflush (stdout);
    zmq_msg_t m;
    zmq_msg_init (&m);
    for (long i = 0; msg_mode && i < roundtrips; i++) {
        /* Echo the received message object itself: no copy. */
        if (w_check (czmq_receive_msg (h, &m, -1), "czmq_receive_msg") != size)
            die ("message", "wrong size");
        w_check (czmq_send_msg (h, eid, &m), "czmq_send_msg");
    }
    zmq_msg_close (&m);
    for (long i = 0; !msg_mode && i < roundtrips; i++) {
        void *data;
        size_t got;
        czmq_free_fn *ffn;
        w_check (czmq_receive_ex (h, &data, &got, &ffn, -1), "czmq_receive");
        if ((long) got != size)
            die ("message", "wrong size");
        /* Echo the received buffer itself: handed over with its free function, no copy. */
        w_check (czmq_send_ex (h, eid, data, got, ffn), "czmq_send");
    }
    czmq_destroy (h);
    return 0;
}
