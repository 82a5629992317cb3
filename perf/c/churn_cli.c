/* churn_cli <connect-to> <warmup> <cycles>
   The connecting side of the churn scenario: one context; each cycle creates a DEALER,
   connects, makes one round trip with churn_srv (so the handshake is done and the
   connection is in use) and closes it. <warmup> cycles first, then "mark" (the server's
   "before" snapshot), <cycles> cycles, and "end" (the "after" snapshot), whose reply is
   printed as the result with the cycle rate. */
#include "scale_util.h"

static int cycle (void *ctx, const char *ep, const char *req, char *reply, size_t cap)
{
    void *d = zsock (ctx, ZMQ_DEALER);
    zsetint (d, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zsetint (d, ZMQ_RCVTIMEO, 30000, "ZMQ_RCVTIMEO");
    zcheck (zmq_connect (d, ep), "zmq_connect");
    zcheck (zmq_send (d, req, strlen (req), 0), "zmq_send");
    int n = zmq_recv (d, reply, cap - 1, 0);
    if (n < 0)
        die ("churn_cli: waiting for the reply", zmq_strerror (zmq_errno ()));
    reply[n < (int) cap - 1 ? n : (int) cap - 1] = 0;
    zmq_close (d);
    return n;
}

int main (int argc, char *argv[])
{
    if (argc != 4) {
        fprintf (stderr, "usage: churn_cli <connect-to> <warmup> <cycles>\n");
        return 1;
    }
    long warmup = parse_count (argv[2], "warmup");
    long cycles = parse_count (argv[3], "cycles");
    proc_init ();
    void *ctx = zctx (4);
    char reply[512];
    long errors = 0;
    for (long i = 0; i < warmup; i++)
        if (cycle (ctx, argv[1], "hi", reply, sizeof reply) != 2 || strcmp (reply, "hi"))
            errors++;
    char req[64];
    snprintf (req, sizeof req, "mark:%ld", warmup + 1);
    cycle (ctx, argv[1], req, reply, sizeof reply);
    double t0 = now_us ();
    for (long i = 0; i < cycles; i++)
        if (cycle (ctx, argv[1], "hi", reply, sizeof reply) != 2 || strcmp (reply, "hi"))
            errors++;
    double t1 = now_us ();
    snprintf (req, sizeof req, "end:%ld", warmup + 1 + cycles + 1);
    cycle (ctx, argv[1], req, reply, sizeof reply);
    result ("%s cycle_us=%.0f client_errors=%ld", reply, t1 - t0, errors);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
