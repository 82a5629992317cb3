/* local_thr <host> <location> <message-size> <message-count>
   Creates the global queue "Q" at <location> ("" picks one) with the name service at <host>,
   receives <message-count> messages and prints the throughput, timed from the first message
   (as libzmq's local_thr). */
#include "wiring_perf.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        printf ("usage: local_thr <host> <location> <message-size> <message-count>\n");
        return 1;
    }
    long size = parse_count (argv[3], "message-size");
    long count = parse_count (argv[4], "message-count");
    void *h = w_create (argv[1]);
    w_check (czmq_create_queue (h, "Q", CZMQ_SCOPE_GLOBAL, argv[2]), "czmq_create_queue");
    printf ("ready\n");
    fflush (stdout);
    if ((long) w_receive (h) != size)
        die ("message", "wrong size");
    double start = now_us ();
    for (long i = 1; i < count; i++)
        if ((long) w_receive (h) != size)
            die ("message", "wrong size");
    double elapsed = now_us () - start;
    print_throughput (size, count, elapsed);
    czmq_destroy (h);
    return 0;
}
