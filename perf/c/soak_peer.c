/* soak_peer <role> <args...>: the processes of the soak run (perf/soak/soak.py), one
   program with a role each, every socket with heartbeats on (HEARTBEAT_IVL 200 ms,
   HEARTBEAT_TIMEOUT 800 ms for REQ/REP, 3 s for the others):

     rep <bind-to>                   REP echo server; binds <bind-to>, retrying for 10 s while
                                     the port is still held (a restart at the same endpoint)
     client <connect-to> <sockets> <interval-ms> <timeout-ms>
                                     lazy-pirate REQ client: <sockets> REQ sockets, each one
                                     request at a time, the next <interval-ms> after a reply;
                                     no reply within <timeout-ms>: close the socket, open a new
                                     one, send the same request again. Each reply must be its
                                     request. On "stop" it finishes what is outstanding.
     sink <bind-to>                  PULL that checks streams: per producer, seq 0, 1, ... in
                                     order and an end marker carrying the count; prints
                                     "done <id> ok" (or "done <id> bad ...") per stream
     producer <connect-to> <id> <count>
                                     PUSH: <count> messages and the end marker, then close and
                                     end the context (default linger: all delivered), exit 0
     pub <bind-to> <interval-ms>     PUB: a numbered message every <interval-ms>
     sub <connect-to>                SUB: counts messages, gaps and misordered ones

   Long-lived roles (client, sink, pub, sub) read commands on stdin: "stats" prints a
   "stats k=v ..." line, "stop" (or end of input) prints the "result k=v ..." line and exits
   (non-zero if it saw an error). Every process dies with its parent (PR_SET_PDEATHSIG). */
#include "scale_util.h"

/* PING every 200 ms. REQ/REP drop a silent peer after 800 ms (the frozen REP server is
   noticed; a lost request is retried anyway); the streams and PUB/SUB allow 3 s, so a
   loaded machine's scheduling delay is not taken for a dead peer: a connection dropped
   during a producer's linger loses its tail, and that would be the test's doing. */
static void heartbeats_ms (void *s, int timeout_ms)
{
    zsetint (s, ZMQ_HEARTBEAT_IVL, 200, "ZMQ_HEARTBEAT_IVL");
    zsetint (s, ZMQ_HEARTBEAT_TIMEOUT, timeout_ms, "ZMQ_HEARTBEAT_TIMEOUT");
    zsetint (s, ZMQ_HEARTBEAT_TTL, timeout_ms + 1000, "ZMQ_HEARTBEAT_TTL");
}

static void heartbeats (void *s)
{
    heartbeats_ms (s, 3000);
}

/* stdin commands, a line each: read what is there when poll says so (stdin_read, -1 at
   the end of input), then take whole lines (next_command: 1 "stats", 2 "stop", 0 none). */
static char cmd_buf[256];
static size_t cmd_len;

static int stdin_read (void)
{
    if (cmd_len >= sizeof cmd_buf - 1)
        cmd_len = 0; /* a line that long is no command */
    ssize_t n = read (0, cmd_buf + cmd_len, sizeof cmd_buf - 1 - cmd_len);
    if (n <= 0)
        return -1;
    cmd_len += (size_t) n;
    return 0;
}

static int next_command (void)
{
    for (;;) {
        char *nl = memchr (cmd_buf, '\n', cmd_len);
        if (!nl)
            return 0;
        *nl = 0;
        int c = strcmp (cmd_buf, "stats") == 0 ? 1 : strcmp (cmd_buf, "stop") == 0 ? 2 : 0;
        size_t used = (size_t) (nl - cmd_buf) + 1;
        memmove (cmd_buf, nl + 1, cmd_len - used);
        cmd_len -= used;
        if (c)
            return c;
    }
}

/* Handles stdin when poll reports it: prints the stats line on "stats" (through the
   callback); returns 1 on "stop" or the end of input. */
typedef void (*stats_fn) (void);

static int handle_stdin (stats_fn stats)
{
    if (stdin_read () < 0)
        return 1;
    int c;
    while ((c = next_command ()) != 0) {
        if (c == 1)
            stats ();
        if (c == 2)
            return 1;
    }
    return 0;
}

static void stats_line (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fputs ("stats ", stdout);
    vprintf (fmt, ap);
    fputc ('\n', stdout);
    fflush (stdout);
    va_end (ap);
}

static int role_rep (void *ctx, const char *ep)
{
    void *r = zsock (ctx, ZMQ_REP);
    heartbeats_ms (r, 800);
    zsetint (r, ZMQ_LINGER, 0, "ZMQ_LINGER");
    double deadline = now_us () + 10e6;
    while (zmq_bind (r, ep) != 0) {
        if (zmq_errno () != EADDRINUSE || now_us () > deadline)
            die ("rep: zmq_bind", zmq_strerror (zmq_errno ()));
        usleep (50000); /* the old process's port is not free yet: retry, bounded */
    }
    char buf[256];
    size_t len = sizeof buf;
    zcheck (zmq_getsockopt (r, ZMQ_LAST_ENDPOINT, buf, &len), "ZMQ_LAST_ENDPOINT");
    printf ("endpoint %s\n", buf);
    fflush (stdout);
    zmq_msg_t m;
    zmq_msg_init (&m);
    while (zmq_msg_recv (&m, r, 0) >= 0 && zmq_msg_send (&m, r, 0) >= 0)
        ; /* until killed */
    die ("rep", zmq_strerror (zmq_errno ()));
    return 1;
}

struct req_slot
{
    void *s;
    int waiting;
    double sent_at, next_at;
    char req[64];
    int len;
};

static long requests, answered, retries, errors, recreated;

static void client_stats (void)
{
    stats_line ("requests=%ld answered=%ld retries=%ld errors=%ld", requests, answered, retries, errors);
}

static void *new_req (void *ctx, const char *ep)
{
    void *s = zsock (ctx, ZMQ_REQ);
    heartbeats_ms (s, 800);
    zsetint (s, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zcheck (zmq_connect (s, ep), "zmq_connect");
    return s;
}

static int role_client (void *ctx, const char *ep, long n, long interval_ms, long timeout_ms)
{
    struct req_slot *slot = calloc ((size_t) n, sizeof *slot);
    zmq_pollitem_t *items = calloc ((size_t) n + 1, sizeof *items);
    long *map = calloc ((size_t) n, sizeof *map);
    int stopping = 0;
    double stop_deadline = 0;
    for (long i = 0; i < n; i++) {
        slot[i].s = new_req (ctx, ep);
        slot[i].next_at = now_us ();
    }
    zmq_msg_t m;
    zmq_msg_init (&m);
    for (;;) {
        double now = now_us ();
        int waiting = 0;
        for (long i = 0; i < n; i++) {
            struct req_slot *q = &slot[i];
            if (!q->waiting && !stopping && now >= q->next_at) {
                q->len = snprintf (q->req, sizeof q->req, "req-%ld-%ld", i, requests++);
                q->waiting = 1;
                q->sent_at = now;
                if (zmq_send (q->s, q->req, (size_t) q->len, ZMQ_DONTWAIT) < 0)
                    q->sent_at = 0; /* could not queue: counts as timed out at once */
            }
            if (q->waiting && now - q->sent_at > timeout_ms * 1e3) {
                /* lazy pirate: the server is gone or slow; a new socket, the same request */
                zmq_close (q->s);
                q->s = new_req (ctx, ep);
                recreated++;
                retries++;
                q->sent_at = now;
                if (zmq_send (q->s, q->req, (size_t) q->len, ZMQ_DONTWAIT) < 0)
                    q->sent_at = 0;
            }
            waiting += q->waiting;
        }
        if (stopping && waiting == 0)
            break;
        if (stopping && now > stop_deadline) {
            errors += waiting;
            fprintf (stderr, "client: %d requests still unanswered 60 s after stop\n", waiting);
            break;
        }
        int k = 0;
        items[k].socket = NULL;
        items[k].fd = 0;
        items[k].events = stopping ? 0 : ZMQ_POLLIN;
        k++;
        double wake = now + 100e3;
        for (long i = 0; i < n; i++) {
            struct req_slot *q = &slot[i];
            if (q->waiting) {
                items[k].socket = q->s;
                items[k].events = ZMQ_POLLIN;
                map[k - 1] = i;
                k++;
                if (q->sent_at + timeout_ms * 1e3 < wake)
                    wake = q->sent_at + timeout_ms * 1e3;
            } else if (!stopping && q->next_at < wake)
                wake = q->next_at;
        }
        long ms = (long) ((wake - now) / 1e3) + 1;
        int rc = zmq_poll (items, k, ms < 0 ? 0 : ms);
        if (rc < 0 && zmq_errno () != EINTR)
            die ("client: zmq_poll", zmq_strerror (zmq_errno ()));
        if (rc <= 0)
            continue;
        if ((items[0].revents & ZMQ_POLLIN) && handle_stdin (client_stats)) {
            stopping = 1;
            stop_deadline = now_us () + 60e6;
        }
        for (int j = 1; j < k; j++) {
            if (!(items[j].revents & ZMQ_POLLIN))
                continue;
            struct req_slot *q = &slot[map[j - 1]];
            if (zmq_msg_recv (&m, q->s, ZMQ_DONTWAIT) < 0)
                continue;
            if ((int) zmq_msg_size (&m) != q->len || memcmp (zmq_msg_data (&m), q->req, (size_t) q->len)) {
                errors++;
                fprintf (stderr, "client: reply does not match its request %s\n", q->req);
            }
            answered++;
            q->waiting = 0;
            q->next_at = now_us () + interval_ms * 1e3;
        }
    }
    result ("requests=%ld answered=%ld retries=%ld recreated=%ld errors=%ld", requests, answered, retries,
            recreated, errors);
    for (long i = 0; i < n; i++)
        zmq_close (slot[i].s);
    zmq_msg_close (&m);
    return errors || answered != requests ? 1 : 0;
}

/* sink streams: [u32 producer][u32 seq][u32 kind: 0 data, 1 end (seq = count)] */
#define SINK_SLOTS 65536
static long msgs, completed, bad, order_errors;

static void sink_stats (void)
{
    stats_line ("messages=%ld completed=%ld bad=%ld order_errors=%ld", msgs, completed, bad, order_errors);
}

static int role_sink (void *ctx, const char *ep)
{
    void *p = zsock (ctx, ZMQ_PULL);
    heartbeats (p);
    zsetint (p, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zbind_print (p, ep, "endpoint");
    /* touched up front, so the process's RSS does not grow with the number of streams */
    uint32_t (*slot)[2] = malloc (sizeof (uint32_t[2]) * SINK_SLOTS);
    memset (slot, 0xff, sizeof (uint32_t[2]) * SINK_SLOTS);
    zmq_pollitem_t items[2] = {{NULL, 0, ZMQ_POLLIN, 0}, {p, 0, ZMQ_POLLIN, 0}};
    char buf[64];
    for (;;) {
        int rc = zmq_poll (items, 2, 1000);
        if (rc < 0 && zmq_errno () != EINTR)
            die ("sink: zmq_poll", zmq_strerror (zmq_errno ()));
        if (rc > 0 && (items[0].revents & ZMQ_POLLIN) && handle_stdin (sink_stats))
            break;
        int n;
        while ((n = zmq_recv (p, buf, sizeof buf, ZMQ_DONTWAIT)) >= 0) {
            if (n != 12) {
                order_errors++;
                continue;
            }
            uint32_t id = get_u32 (buf), seq = get_u32 (buf + 4), kind = get_u32 (buf + 8);
            uint32_t *s = slot[id % SINK_SLOTS];
            if (s[0] != id) {
                s[0] = id; /* a new stream (or one whose slot an older, dead one held) */
                s[1] = 0;
            }
            if (kind == 1) {
                if (seq == s[1]) {
                    completed++;
                    printf ("done %u ok\n", id);
                } else {
                    bad++;
                    printf ("done %u bad received=%u count=%u\n", id, s[1], seq);
                }
                fflush (stdout);
                continue;
            }
            msgs++;
            if (seq != s[1]) {
                order_errors++;
                printf ("order %u expected=%u got=%u\n", id, s[1], seq);
                fflush (stdout);
            }
            s[1] = seq + 1;
        }
    }
    result ("messages=%ld completed=%ld bad=%ld order_errors=%ld", msgs, completed, bad, order_errors);
    free (slot);
    zmq_close (p);
    return bad || order_errors ? 1 : 0;
}

static int role_producer (void *ctx, const char *ep, long id, long count)
{
    void *p = zsock (ctx, ZMQ_PUSH);
    heartbeats (p);
    zsetint (p, ZMQ_LINGER, 30000, "ZMQ_LINGER"); /* bounded: a lost sink must not hang us */
    zsetint (p, ZMQ_SNDTIMEO, 30000, "ZMQ_SNDTIMEO");
    zcheck (zmq_connect (p, ep), "zmq_connect");
    char buf[12];
    for (long i = 0; i <= count; i++) {
        put_u32 (buf, (uint32_t) id);
        put_u32 (buf + 4, (uint32_t) i);
        put_u32 (buf + 8, i == count ? 1 : 0);
        zcheck (zmq_send (p, buf, sizeof buf, 0), "producer: zmq_send");
    }
    zmq_close (p);
    return 0;
}

static uint64_t pub_sent;

static void pub_stats (void)
{
    stats_line ("sent=%llu", (unsigned long long) pub_sent);
}

static int role_pub (void *ctx, const char *ep, long interval_ms)
{
    void *p = zsock (ctx, ZMQ_PUB);
    heartbeats (p);
    zsetint (p, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zbind_print (p, ep, "endpoint");
    char body[64] = {0};
    uint64_t seq = 0;
    double next = now_us ();
    zmq_pollitem_t item = {NULL, 0, ZMQ_POLLIN, 0};
    for (;;) {
        double now = now_us ();
        if (now >= next) {
            put_u64 (body, seq++);
            zcheck (zmq_send (p, body, sizeof body, ZMQ_DONTWAIT), "pub: zmq_send");
            next += interval_ms * 1e3;
            if (next < now)
                next = now;
            continue;
        }
        int rc = zmq_poll (&item, 1, (long) ((next - now) / 1e3) + 1);
        if (rc < 0 && zmq_errno () != EINTR)
            die ("pub: zmq_poll", zmq_strerror (zmq_errno ()));
        pub_sent = seq;
        if (rc > 0 && handle_stdin (pub_stats))
            break;
    }
    result ("sent=%llu", (unsigned long long) seq);
    zmq_close (p);
    return 0;
}

static long received, gaps;

static void sub_stats (void)
{
    stats_line ("received=%ld gaps=%ld errors=%ld", received, gaps, errors);
}

static int role_sub (void *ctx, const char *ep)
{
    void *s = zsock (ctx, ZMQ_SUB);
    heartbeats (s);
    zsetint (s, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zcheck (zmq_setsockopt (s, ZMQ_SUBSCRIBE, "", 0), "ZMQ_SUBSCRIBE");
    zcheck (zmq_connect (s, ep), "zmq_connect");
    uint64_t next = UINT64_MAX;
    zmq_pollitem_t items[2] = {{NULL, 0, ZMQ_POLLIN, 0}, {s, 0, ZMQ_POLLIN, 0}};
    char buf[128];
    for (;;) {
        int rc = zmq_poll (items, 2, 1000);
        if (rc < 0 && zmq_errno () != EINTR)
            die ("sub: zmq_poll", zmq_strerror (zmq_errno ()));
        if (rc > 0 && (items[0].revents & ZMQ_POLLIN) && handle_stdin (sub_stats))
            break;
        int n;
        while ((n = zmq_recv (s, buf, sizeof buf, ZMQ_DONTWAIT)) >= 0) {
            if (n != 64) {
                errors++;
                continue;
            }
            uint64_t seq = get_u64 (buf);
            if (next != UINT64_MAX) {
                if (seq < next)
                    errors++;
                else
                    gaps += (long) (seq - next);
            }
            next = seq + 1;
            received++;
        }
    }
    result ("received=%ld gaps=%ld errors=%ld", received, gaps, errors);
    zmq_close (s);
    return errors ? 1 : 0;
}

int main (int argc, char *argv[])
{
    proc_init ();
    if (getppid () == 1)
        return 1; /* the parent is already gone */
    const char *role = argc > 1 ? argv[1] : "";
    void *ctx = zctx (256);
    int rc;
    if (!strcmp (role, "rep") && argc == 3)
        rc = role_rep (ctx, argv[2]);
    else if (!strcmp (role, "client") && argc == 6)
        rc = role_client (ctx, argv[2], parse_count (argv[3], "sockets"), parse_count (argv[4], "interval-ms"),
                          parse_count (argv[5], "timeout-ms"));
    else if (!strcmp (role, "sink") && argc == 3)
        rc = role_sink (ctx, argv[2]);
    else if (!strcmp (role, "producer") && argc == 5)
        rc = role_producer (ctx, argv[2], parse_count (argv[3], "id"), parse_count (argv[4], "count"));
    else if (!strcmp (role, "pub") && argc == 4)
        rc = role_pub (ctx, argv[2], parse_count (argv[3], "interval-ms"));
    else if (!strcmp (role, "sub") && argc == 3)
        rc = role_sub (ctx, argv[2]);
    else {
        fprintf (stderr, "usage: soak_peer rep|client|sink|producer|pub|sub <args> (see the source)\n");
        return 2;
    }
    zmq_ctx_term (ctx);
    if (!strcmp (role, "producer"))
        result ("id=%s count=%s", argv[3], argv[4]);
    return rc;
}
