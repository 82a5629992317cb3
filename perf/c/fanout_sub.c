/* fanout_sub <connect-to> <sync> <sockets> <count>
   Subscribers of the fan-out scenario, <sockets> SUB sockets in this process (RCVHWM 0,
   subscribed to everything) read with zmq_poll. Checks every message: its size, and that
   each socket sees 0, 1, ..., <count>-1 in order, then the end marker. Then reports its
   CPU from the first message to the last and its peak RSS, and sends its error count to
   the publisher's sync socket ("done"). */
#include "scale_util.h"

/* Each socket must see 0, 1, ..., count-1 in order, then the end marker. */
struct expect {
    uint64_t *next;
    uint64_t count;
    long deliveries;
    long errors;
};

static void on_seq (void *state, long i, uint64_t seq)
{
    struct expect *e = state;
    if (seq != e->next[i])
        e->errors++;
    e->next[i] = seq + 1;
    e->deliveries++;
}

static void on_end (void *state, long i, uint64_t seq)
{
    struct expect *e = state;
    (void) seq;
    if (e->next[i] != e->count)
        e->errors++;
}

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: fanout_sub <connect-to> <sync> <sockets> <count>\n");
        return 1;
    }
    long n = parse_count (argv[3], "sockets");
    long count = parse_count (argv[4], "count");
    proc_init ();
    void *ctx = zctx ((int) n + 1);
    void **subs = calloc ((size_t) n, sizeof *subs);
    struct expect e = {calloc ((size_t) n, sizeof *e.next), (uint64_t) count, 0, 0};
    if (!subs || !e.next)
        die ("fanout_sub", "out of memory");
    for (long i = 0; i < n; i++) {
        subs[i] = zsock (ctx, ZMQ_SUB);
        zsetint (subs[i], ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
        zsetint (subs[i], ZMQ_LINGER, 0, "ZMQ_LINGER");
        zcheck (zmq_setsockopt (subs[i], ZMQ_SUBSCRIBE, "", 0), "ZMQ_SUBSCRIBE");
        zcheck (zmq_connect (subs[i], argv[1]), "zmq_connect");
    }
    long long cpu0 = read_until_end (subs, n, "fanout_sub", on_seq, on_end, &e, &e.errors);
    long long cpu1 = cpu_us ();
    result ("sockets=%ld deliveries=%ld errors=%ld cpu_us=%lld maxrss_kb=%ld", n, e.deliveries, e.errors,
            cpu1 - (cpu0 < 0 ? cpu1 : cpu0), maxrss_kb ());

    send_done (ctx, argv[2], e.errors);
    for (long i = 0; i < n; i++)
        zmq_close (subs[i]);
    zmq_ctx_term (ctx);
    return e.errors ? 1 : 0;
}
