/* spread_pull <connect-to> <sync> <sockets> <count>
   Peers of the spread scenario: <sockets> PULL sockets in this process (RCVHWM 0), read with
   zmq_poll. The sender deals its messages round robin: each socket must see its messages in
   increasing order of their sequence numbers, then one end marker (sent to every peer after
   the last message). About <count> each, not exactly: a pipe joins the sender's round robin
   when its socket thread takes the attach command, which can be a few hundred messages after
   the handshake the sender waited for; the driver checks that the total is exact. Reports
   what it received, its CPU from the first message to the last and its peak RSS, and sends
   its error count to the sender's sync socket ("done"). */
#include "scale_util.h"

/* Each socket must see increasing sequence numbers (its share of the round robin). */
struct expect {
    long *got;
    uint64_t *last;
    long received;
    long errors;
};

static void on_seq (void *state, long i, uint64_t seq)
{
    struct expect *e = state;
    if (e->got[i] > 0 && seq <= e->last[i])
        e->errors++;
    e->last[i] = seq;
    e->got[i]++;
    e->received++;
}

static void on_end (void *state, long i, uint64_t seq)
{
    (void) state;
    (void) i;
    (void) seq;
}

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: spread_pull <connect-to> <sync> <sockets> <count>\n");
        return 1;
    }
    long n = parse_count (argv[3], "sockets");
    (void) parse_count (argv[4], "count"); /* each socket's nominal share, for the usage */
    proc_init ();
    void *ctx = zctx ((int) n + 1);
    void **pulls = calloc ((size_t) n, sizeof *pulls);
    struct expect e = {calloc ((size_t) n, sizeof *e.got), calloc ((size_t) n, sizeof *e.last), 0, 0};
    if (!pulls || !e.got || !e.last)
        die ("spread_pull", "out of memory");
    for (long i = 0; i < n; i++) {
        pulls[i] = zsock (ctx, ZMQ_PULL);
        zsetint (pulls[i], ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
        zsetint (pulls[i], ZMQ_LINGER, 0, "ZMQ_LINGER");
        zcheck (zmq_connect (pulls[i], argv[1]), "zmq_connect");
    }
    long long cpu0 = read_until_end (pulls, n, "spread_pull", on_seq, on_end, &e, &e.errors);
    long long cpu1 = cpu_us ();
    result ("sockets=%ld received=%ld errors=%ld cpu_us=%lld maxrss_kb=%ld", n, e.received, e.errors,
            cpu1 - (cpu0 < 0 ? cpu1 : cpu0), maxrss_kb ());

    send_done (ctx, argv[2], e.errors);
    for (long i = 0; i < n; i++)
        zmq_close (pulls[i]);
    zmq_ctx_term (ctx);
    return e.errors ? 1 : 0;
}
