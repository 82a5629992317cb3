/* churn_srv <bind-to>
   The bound side of the churn scenario: a ROUTER that echoes every request, watched by its
   own monitor (ACCEPTED and DISCONNECTED events). A client (churn_cli) connects, asks and
   disconnects over and over. Its request "mark:<n>" takes the "before" snapshot and
   "end:<n>" the "after" one (<n>: connections made so far, this one included): each waits
   until all <n> have been accepted and all but the asking one reported disconnected, and "end" also until the descriptors and threads are back
   to the "before" counts (bounded: 10 s), so the figures compare like with like. A snapshot
   is open descriptors (/proc/self/fd), threads and RSS; "end" replies with the result line
   and prints it. */
#include "scale_util.h"

struct snap
{
    long fds, threads, rss_kb;
};

static struct snap take (void)
{
    struct snap s = {open_fds (), threads (), rss_kb ()};
    return s;
}

static long accepted, disconnected;

/* Reads monitor events for up to timeout_ms; libzmq's format: a 6-byte frame (u16 event,
   u32 value), then the endpoint. */
static void pump_monitor (void *mon, void *router, int timeout_ms)
{
    zmq_pollitem_t items[2] = {{mon, 0, ZMQ_POLLIN, 0}, {router, 0, 0, 0}};
    if (zmq_poll (items, 2, timeout_ms) <= 0)
        return;
    zmq_msg_t m;
    zmq_msg_init (&m);
    while (zmq_msg_recv (&m, mon, ZMQ_DONTWAIT) >= 0) {
        uint16_t ev = 0;
        if (zmq_msg_size (&m) >= 2)
            memcpy (&ev, zmq_msg_data (&m), 2);
        if (ev == ZMQ_EVENT_ACCEPTED)
            accepted++;
        else if (ev == ZMQ_EVENT_DISCONNECTED)
            disconnected++;
        zmq_msg_recv (&m, mon, 0); /* the endpoint frame */
    }
    zmq_msg_close (&m);
}

/* Until the <made> connections the client has made so far have all been accepted and all
   but the one asking reported disconnected. */
static void wait_quiet (void *mon, void *router, long made)
{
    double deadline = now_us () + 30e6;
    while (accepted < made || disconnected < made - 1) {
        if (now_us () > deadline)
            die ("churn_srv", "connections never reported disconnected");
        pump_monitor (mon, router, 100);
    }
}

int main (int argc, char *argv[])
{
    if (argc != 2) {
        fprintf (stderr, "usage: churn_srv <bind-to>\n");
        return 1;
    }
    proc_init ();
    void *ctx = zctx (4);
    void *r = zsock (ctx, ZMQ_ROUTER);
    zsetint (r, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zcheck (zmq_socket_monitor (r, "inproc://churn-monitor", ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED),
            "zmq_socket_monitor");
    void *mon = zsock (ctx, ZMQ_PAIR);
    zcheck (zmq_connect (mon, "inproc://churn-monitor"), "zmq_connect monitor");
    zbind_print (r, argv[1], "endpoint");

    struct snap before = {0}, after = {0};
    long requests = 0, marked_at = 0;
    zmq_msg_t id, body;
    zmq_msg_init (&id);
    zmq_msg_init (&body);
    zmq_pollitem_t items[2] = {{r, 0, ZMQ_POLLIN, 0}, {mon, 0, ZMQ_POLLIN, 0}};
    double last = now_us ();
    for (;;) {
        int rc = zmq_poll (items, 2, 1000);
        zcheck (rc, "zmq_poll");
        if (rc == 0 && now_us () - last > 120e6)
            die ("churn_srv", "no request for 120 s");
        if (items[1].revents & ZMQ_POLLIN)
            pump_monitor (mon, r, 0);
        if (!(items[0].revents & ZMQ_POLLIN))
            continue;
        last = now_us ();
        if (zmq_msg_recv (&id, r, 0) < 0 || zmq_msg_recv (&body, r, 0) < 0)
            die ("zmq_msg_recv", zmq_strerror (zmq_errno ()));
        requests++;
        size_t len = zmq_msg_size (&body);
        const char *b = zmq_msg_data (&body);
        char reply[512];
        int rlen;
        int is_mark = len > 5 && memcmp (b, "mark:", 5) == 0;
        int is_end = len > 4 && memcmp (b, "end:", 4) == 0;
        if (is_mark || is_end) {
            char num[32] = {0};
            size_t skip = is_mark ? 5 : 4;
            memcpy (num, b + skip, len - skip < sizeof num - 1 ? len - skip : sizeof num - 1);
            wait_quiet (mon, r, strtol (num, NULL, 10));
        }
        if (is_mark) {
            before = take ();
            marked_at = accepted;
            rlen = snprintf (reply, sizeof reply, "fds=%ld threads=%ld rss_kb=%ld", before.fds,
                             before.threads, before.rss_kb);
        } else if (is_end) {
            double deadline = now_us () + 10e6;
            after = take ();
            while ((after.fds > before.fds || after.threads > before.threads) && now_us () < deadline) {
                pump_monitor (mon, r, 1);
                after = take ();
            }
            rlen = snprintf (reply, sizeof reply,
                             "cycles=%ld fds_before=%ld fds_after=%ld threads_before=%ld threads_after=%ld "
                             "rss_before_kb=%ld rss_after_kb=%ld accepted=%ld disconnected=%ld",
                             accepted - marked_at - 1, before.fds, after.fds, before.threads, after.threads,
                             before.rss_kb, after.rss_kb, accepted, disconnected);
        } else {
            memcpy (reply, b, len < sizeof reply ? len : sizeof reply);
            rlen = (int) (len < sizeof reply ? len : sizeof reply);
        }
        zcheck (zmq_msg_send (&id, r, ZMQ_SNDMORE), "zmq_send id");
        zcheck (zmq_send (r, reply, (size_t) rlen, 0), "zmq_send reply");
        if (is_end) {
            reply[rlen] = 0;
            result ("%s requests=%ld", reply, requests);
            break;
        }
    }
    zmq_msg_close (&id);
    zmq_msg_close (&body);
    zmq_socket_monitor (r, NULL, 0);
    zmq_close (mon);
    zmq_close (r);
    zmq_ctx_term (ctx);
    return 0;
}
