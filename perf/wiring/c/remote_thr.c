/* remote_thr <host> <message-size> <message-count> [msg]
   Creates the local exchange "E", binds it to the global queue "Q" (resolved through the name
   service at <host>), sends <message-count> messages and waits until they are delivered. */
#include "wiring_perf.h"

int main (int argc, char *argv[])
{
    int msg_mode = w_msg_mode (argc, argv, 4);
    if (msg_mode < 0) {
        printf ("usage: remote_thr <host> <message-size> <message-count> [msg]\n");
        return 1;
    }
    long size = parse_count (argv[2], "message-size");
    long count = parse_count (argv[3], "message-count");
    void *h = w_create (argv[1]);
    int eid = w_check (czmq_create_exchange (h, "E", CZMQ_SCOPE_LOCAL, NULL), "czmq_create_exchange");
    w_check (czmq_bind_ex (h, "E", "Q"), "czmq_bind");
    void *buf = calloc (1, (size_t) size + 1);
    for (long i = 0; i < count; i++) {
        if (msg_mode)
            w_send_msg (h, eid, (size_t) size);
        else
            w_send (h, eid, buf, (size_t) size);
    }
    w_check (czmq_destroy_ex (h), "czmq_destroy");
    free (buf);
    return 0;
}
