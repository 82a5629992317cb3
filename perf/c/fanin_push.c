/* fanin_push <connect-to> <sync> <first-id> <sockets> <count> <size>
   <sockets> PUSH sockets of the fan-in scenario in this process, sender indexes
   <first-id>..: each sends a hello, the process says "ready" on the sync socket and waits
   for "go", then sends <count> rounds of one message per socket (index and sequence number
   in the first 8 bytes, <size> bytes). Closes with the default linger, so everything is
   delivered; reports its CPU from "go" to the end of the context. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 7) {
        fprintf (stderr, "usage: fanin_push <connect-to> <sync> <first-id> <sockets> <count> <size>\n");
        return 1;
    }
    long first = parse_count (argv[3], "first-id");
    long n = parse_count (argv[4], "sockets");
    long count = parse_count (argv[5], "count");
    long size = parse_count (argv[6], "size");
    if (size < 8)
        size = 8;
    proc_init ();
    void *ctx = zctx ((int) n + 1);
    void **p = calloc ((size_t) n, sizeof *p);
    char *body = calloc (1, (size_t) size);
    for (long i = 0; i < n; i++) {
        p[i] = zsock (ctx, ZMQ_PUSH);
        zsetint (p[i], ZMQ_SNDTIMEO, 300000, "ZMQ_SNDTIMEO");
        zcheck (zmq_connect (p[i], argv[1]), "zmq_connect");
        put_u32 (body, (uint32_t) (first + i));
        put_u32 (body + 4, UINT32_MAX);
        zcheck (zmq_send (p[i], body, 8, 0), "zmq_send hello");
    }
    void *sync = zsock (ctx, ZMQ_DEALER);
    zsetint (sync, ZMQ_RCVTIMEO, 300000, "ZMQ_RCVTIMEO");
    zcheck (zmq_connect (sync, argv[2]), "zmq_connect sync");
    zcheck (zmq_send (sync, "ready", 5, 0), "zmq_send ready");
    char go[8];
    if (zmq_recv (sync, go, sizeof go, 0) < 0)
        die ("waiting for go", zmq_strerror (zmq_errno ()));
    long long cpu0 = cpu_us ();
    for (long r = 0; r < count; r++)
        for (long i = 0; i < n; i++) {
            put_u32 (body, (uint32_t) (first + i));
            put_u32 (body + 4, (uint32_t) r);
            zcheck (zmq_send (p[i], body, (size_t) size, 0), "zmq_send");
        }
    for (long i = 0; i < n; i++)
        zmq_close (p[i]);
    zmq_close (sync);
    zmq_ctx_term (ctx);
    result ("sockets=%ld count=%ld cpu_us=%lld maxrss_kb=%ld", n, count, cpu_us () - cpu0, maxrss_kb ());
    free (body);
    return 0;
}
