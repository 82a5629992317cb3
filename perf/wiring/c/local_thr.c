/* local_thr <host> <location> <message-size> <message-count> [msg]
   Creates the global queue "Q" at <location> ("" picks one) with the name service at <host>,
   receives <message-count> messages and prints the throughput, timed from the first message
   (as libzmq's local_thr). */
#include "wiring_perf.h"

int main (int argc, char *argv[])
{
    int msg_mode = w_msg_mode (argc, argv, 5);
    if (msg_mode < 0) {
        printf ("usage: local_thr <host> <location> <message-size> <message-count> [msg]\n");
        return 1;
    }
    long size = parse_count (argv[3], "message-size");
    long count = parse_count (argv[4], "message-count");
    void *h = w_create (argv[1]);
    w_check (czmq_create_queue (h, "Q", CZMQ_SCOPE_GLOBAL, argv[2]), "czmq_create_queue");
    printf ("ready\n");
    fflush (stdout);
    zmq_msg_t m;
    zmq_msg_init (&m);
    double start = 0;
    for (long i = 0; i < count; i++) {
        long got = msg_mode ? (long) w_check (czmq_receive_msg (h, &m, -1), "czmq_receive_msg")
                            : (long) w_receive (h);
        if (got != size)
            die ("message", "wrong size");
        if (i == 0)
            start = now_us ();
    }
    double elapsed = now_us () - start;
    zmq_msg_close (&m);
    print_throughput (size, count, elapsed);
    czmq_destroy (h);
    return 0;
}
