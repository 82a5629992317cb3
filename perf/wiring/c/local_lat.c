/* local_lat <host> <location> <message-size> <roundtrip-count>
   The echo side: creates the global queue "QG" and the global exchange "EG" at <location>
   ("" picks addresses) and sends back every message it receives on EG. */
#include "wiring_perf.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        printf ("usage: local_lat <host> <location> <message-size> <roundtrip-count>\n");
        return 1;
    }
    long size = parse_count (argv[3], "message-size");
    long roundtrips = parse_count (argv[4], "roundtrip-count");
    void *h = w_create (argv[1]);
    w_check (czmq_create_queue (h, "QG", CZMQ_SCOPE_GLOBAL, argv[2]), "czmq_create_queue");
    int eid = w_check (czmq_create_exchange (h, "EG", CZMQ_SCOPE_GLOBAL, argv[2]), "czmq_create_exchange");
    printf ("ready\n");
    fflush (stdout);
    for (long i = 0; i < roundtrips; i++) {
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
