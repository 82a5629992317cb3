/* One end of an omq.rs <-> oxmq interop run (scripts/test.d/42-omq.sh), on oxmq's
   libzmq.so.5 through the C ABI. The other end is interop/omq/src/main.rs on omq.rs; both
   follow the script in interop/omq/README.md byte for byte.

   oxmq-peer bind|connect ENDPOINT null|plain|curve push|pull|req|rep|dealer|router|pub|sub

   The binder prints its bound endpoint (ZMQ_LAST_ENDPOINT) on stdout's first line. TLS
   (wss://) from the environment: WSS_CERT, WSS_KEY (binder), WSS_TRUST, WSS_HOSTNAME
   (connecter), PEM file paths. Exits 0 when every message of the script arrived byte-exact,
   1 otherwise; every wait is bounded (RECV_TIMEOUT_MS per message, PUB_DEADLINE_MS for the
   publisher). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define ZMQ_BUILD_DRAFT_API /* ZMQ_WSS_* are draft options, as in libzmq */
#include <zmq.h>

/* Test keys (libzmq's test suite's, as perf/c and interop/web use); never for real use. */
static const char *SERVER_PUBLIC = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char *SERVER_SECRET = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char *CLIENT_PUBLIC = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char *CLIENT_SECRET = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";
#define PLAIN_USER "alice"
#define PLAIN_PASSWORD "secret"
#define DEALER_ID "dealer-7"

#define RECV_TIMEOUT_MS 10000
#define PUB_DEADLINE_MS 20000
/* A publisher's pause between two rounds of the script (see main.rs's PUB_ROUND_GAP). */
#define PUB_ROUND_GAP_MS 20

/* ---- the script (the same in main.rs) ---- */
#define COUNT 24
#define SEED 0
#define REPLY_SEED 100
#define MAX_PARTS 3
static const char NOISE[] = "x-noise";

typedef struct {
    int n;
    size_t len[MAX_PARTS];
    unsigned char *data[MAX_PARTS];
} message_t;

/* Part lengths of message k: a short one, a multipart with an empty frame, 1 MiB, long frames
   in a multipart, then short numbered ones. */
static int part_lengths (int k, size_t *len)
{
    switch (k) {
        case 0: len[0] = 5; return 1;
        case 1: len[0] = 3; len[1] = 0; len[2] = 200; return 3;
        case 2: len[0] = 1 << 20; return 1;
        case 3: len[0] = 300; len[1] = 1; len[2] = 70000; return 3;
        default: len[0] = 8 + (size_t) k; return 1;
    }
}

/* Byte j of part p of message k: (7j + j/256 + 13k + 29p + seed) mod 251, except the first
   byte of the first part, 't' (the subscription prefix). */
static message_t script_message (int k, int seed)
{
    message_t m;
    m.n = part_lengths (k, m.len);
    for (int p = 0; p < m.n; p++) {
        m.data[p] = malloc (m.len[p] ? m.len[p] : 1);
        for (size_t j = 0; j < m.len[p]; j++)
            m.data[p][j] = (unsigned char) ((7 * j + (j >> 8) + 13 * (size_t) k + 29 * (size_t) p + (size_t) seed) % 251);
        if (p == 0 && m.len[0] > 0)
            m.data[0][0] = 't';
    }
    return m;
}

static void message_free (message_t *m)
{
    for (int p = 0; p < m->n; p++)
        free (m->data[p]);
    m->n = 0;
}

/* ---- the peer ---- */
static void fail (const char *what)
{
    fprintf (stderr, "oxmq-peer: %s\n", what);
    exit (1);
}

#define CHECK(x)                                                                              \
    do {                                                                                      \
        if (!(x)) {                                                                           \
            fprintf (stderr, "oxmq-peer: %s failed at line %d: %s\n", #x, __LINE__,         \
                     zmq_strerror (zmq_errno ()));                                            \
            exit (1);                                                                         \
        }                                                                                     \
    } while (0)

/* A received message: up to 8 parts kept (more count as a mismatch). */
typedef struct {
    int n;
    zmq_msg_t part[8];
} received_t;

static void recv_message (void *s, received_t *r, const char *what)
{
    r->n = 0;
    int more = 1;
    while (more) {
        zmq_msg_t tmp;
        zmq_msg_init (&tmp);
        if (zmq_msg_recv (&tmp, s, 0) < 0) {
            fprintf (stderr, "oxmq-peer: recv %s: %s\n", what, zmq_strerror (zmq_errno ()));
            exit (1);
        }
        more = zmq_msg_more (&tmp);
        if (r->n < 8)
            r->part[r->n] = tmp;
        else
            zmq_msg_close (&tmp);
        r->n++;
    }
}

static void received_close (received_t *r)
{
    for (int i = 0; i < r->n && i < 8; i++)
        zmq_msg_close (&r->part[i]);
    r->n = 0;
}

/* 1 when parts [from, n) of r are exactly m. */
static int equals (received_t *r, int from, const message_t *m)
{
    if (r->n - from != m->n)
        return 0;
    for (int p = 0; p < m->n; p++) {
        zmq_msg_t *part = &r->part[from + p];
        if (zmq_msg_size (part) != m->len[p] || memcmp (zmq_msg_data (part), m->data[p], m->len[p]) != 0)
            return 0;
    }
    return 1;
}

static void describe (received_t *r, int from, const message_t *m, const char *what)
{
    fprintf (stderr, "oxmq-peer: %s: ", what);
    if (r->n - from != m->n) {
        fprintf (stderr, "%d parts, expected %d\n", r->n - from, m->n);
        exit (1);
    }
    for (int p = 0; p < m->n; p++) {
        zmq_msg_t *part = &r->part[from + p];
        const unsigned char *d = zmq_msg_data (part);
        if (zmq_msg_size (part) != m->len[p]) {
            fprintf (stderr, "part %d: %zu bytes, expected %zu\n", p, zmq_msg_size (part), m->len[p]);
            exit (1);
        }
        for (size_t j = 0; j < m->len[p]; j++)
            if (d[j] != m->data[p][j]) {
                fprintf (stderr, "part %d: byte %zu is %u, expected %u\n", p, j, d[j], m->data[p][j]);
                exit (1);
            }
    }
    fprintf (stderr, "equal\n");
    exit (1);
}

static void expect (received_t *r, int from, int k, int seed, const char *what)
{
    message_t m = script_message (k, seed);
    if (!equals (r, from, &m)) {
        char buf[64];
        snprintf (buf, sizeof buf, "%s %d", what, k);
        describe (r, from, &m, buf);
    }
    message_free (&m);
}

static void send_parts (void *s, const message_t *m, int more_after)
{
    for (int p = 0; p < m->n; p++) {
        int flags = (p + 1 < m->n || more_after) ? ZMQ_SNDMORE : 0;
        if (zmq_send (s, m->data[p], m->len[p], flags) != (int) m->len[p]) {
            fprintf (stderr, "oxmq-peer: send: %s\n", zmq_strerror (zmq_errno ()));
            exit (1);
        }
    }
}

static void send_script (void *s, int k, int seed)
{
    message_t m = script_message (k, seed);
    send_parts (s, &m, 0);
    message_free (&m);
}

static long long now_ms (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (long long) t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A ZAP handler admitting PLAIN_USER/PLAIN_PASSWORD and any CURVE client with the right keys
   (the CURVE handshake has already checked them); everyone else gets 400. */
static void *zap (void *ctx)
{
    void *h = zmq_socket (ctx, ZMQ_REP);
    CHECK (zmq_bind (h, "inproc://zeromq.zap.01") == 0);
    for (;;) {
        char frames[8][256];
        size_t len[8];
        int n = 0, more = 1;
        while (more) {
            int r = zmq_recv (h, n < 8 ? frames[n] : frames[7], 255, 0);
            if (r < 0) {
                zmq_close (h);
                return NULL;
            }
            if (n < 8)
                len[n] = r < 255 ? (size_t) r : 255;
            int m = 0;
            size_t sz = sizeof m;
            zmq_getsockopt (h, ZMQ_RCVMORE, &m, &sz);
            more = m;
            n++;
        }
        /* version, request id, domain, address, identity, mechanism, credentials... */
        int ok = n >= 6;
        if (ok && len[5] == 5 && memcmp (frames[5], "PLAIN", 5) == 0)
            ok = n == 8 && len[6] == strlen (PLAIN_USER) && memcmp (frames[6], PLAIN_USER, len[6]) == 0
                 && len[7] == strlen (PLAIN_PASSWORD) && memcmp (frames[7], PLAIN_PASSWORD, len[7]) == 0;
        zmq_send (h, "1.0", 3, ZMQ_SNDMORE);
        zmq_send (h, frames[1], len[1], ZMQ_SNDMORE);
        zmq_send (h, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        zmq_send (h, ok ? "OK" : "denied", ok ? 2 : 6, ZMQ_SNDMORE);
        zmq_send (h, "omq-user", 8, ZMQ_SNDMORE);
        zmq_send (h, "", 0, 0);
    }
}

static char *slurp (const char *path, size_t *n)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        fail ("cannot read a PEM file named in WSS_*");
    static char buf[65536];
    *n = fread (buf, 1, sizeof buf, f);
    fclose (f);
    return buf;
}

static void set_pem (void *s, int option, const char *env)
{
    const char *path = getenv (env);
    if (path && *path) {
        size_t n;
        char *pem = slurp (path, &n);
        CHECK (zmq_setsockopt (s, option, pem, n) == 0);
    }
}

/* Reads the monitor's pending events without waiting; returns handshakes minus disconnects
   seen so far, added to *peers. */
static void drain_monitor (void *mon, int *peers, int *ever)
{
    for (;;) {
        zmq_msg_t ev;
        zmq_msg_init (&ev);
        if (zmq_msg_recv (&ev, mon, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close (&ev);
            return;
        }
        uint16_t event = 0;
        if (zmq_msg_size (&ev) >= 2)
            memcpy (&event, zmq_msg_data (&ev), 2);
        int more = zmq_msg_more (&ev);
        zmq_msg_close (&ev);
        if (more) { /* the endpoint frame */
            zmq_msg_init (&ev);
            zmq_msg_recv (&ev, mon, 0);
            zmq_msg_close (&ev);
        }
        if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            (*peers)++;
            *ever = 1;
        } else if (event == ZMQ_EVENT_DISCONNECTED && *peers > 0)
            (*peers)--;
    }
}

/* The publisher: rounds of the script (each message after a noise message) until its
   subscriber has come and gone (it leaves after one whole clean round). */
static void publish (void *s, void *mon)
{
    long long deadline = now_ms () + PUB_DEADLINE_MS;
    int peers = 0, ever = 0;
    while (!ever) {
        zmq_pollitem_t item = {mon, 0, ZMQ_POLLIN, 0};
        long long left = deadline - now_ms ();
        if (left <= 0)
            fail ("no subscriber connected");
        CHECK (zmq_poll (&item, 1, (long) left) >= 0);
        drain_monitor (mon, &peers, &ever);
    }
    while (peers > 0) {
        if (now_ms () > deadline)
            fail ("the subscriber did not leave before the deadline");
        for (int k = 0; k < COUNT; k++) {
            CHECK (zmq_send (s, NOISE, strlen (NOISE), 0) == (int) strlen (NOISE));
            send_script (s, k, SEED);
        }
        zmq_pollitem_t item = {mon, 0, ZMQ_POLLIN, 0};
        CHECK (zmq_poll (&item, 1, PUB_ROUND_GAP_MS) >= 0);
        drain_monitor (mon, &peers, &ever);
    }
    /* What is still queued (a connecter keeps its queue for a reconnect) has no one to go to. */
    int zero = 0;
    CHECK (zmq_setsockopt (s, ZMQ_LINGER, &zero, sizeof zero) == 0);
}

/* The subscriber (to "t"): waits for a round's first message, then must get the whole round
   byte-exact. A gap (the publisher dropped at its high-water mark, as PUB may) restarts the
   wait; a message not in the script at all, or any noise, fails. */
static void subscribe (void *s)
{
    message_t script[COUNT];
    for (int k = 0; k < COUNT; k++)
        script[k] = script_message (k, SEED);
    int next = 0;
    while (next < COUNT) {
        received_t r;
        recv_message (s, &r, "published message");
        if (r.n > 0 && (zmq_msg_size (&r.part[0]) == 0 || *(char *) zmq_msg_data (&r.part[0]) != 't'))
            fail ("received a message outside the subscription");
        if (equals (&r, 0, &script[next]))
            next++;
        else {
            int k = 0;
            while (k < COUNT && !equals (&r, 0, &script[k]))
                k++;
            if (k == COUNT)
                describe (&r, 0, &script[next], "message not in the script");
            if (next > 0)
                fprintf (stderr, "oxmq-peer: gap before message %d (expected %d); waiting for the next round\n", k, next);
            next = k == 0;
        }
        received_close (&r);
    }
    for (int k = 0; k < COUNT; k++)
        message_free (&script[k]);
}

int main (int argc, char **argv)
{
    if (argc != 5 || (strcmp (argv[1], "bind") && strcmp (argv[1], "connect"))) {
        fprintf (stderr, "usage: oxmq-peer bind|connect ENDPOINT null|plain|curve "
                         "push|pull|req|rep|dealer|router|pub|sub\n");
        return 2;
    }
    int bind = strcmp (argv[1], "bind") == 0;
    const char *ep = argv[2], *mech = argv[3], *role = argv[4];
    static const struct { const char *name; int type; } roles[] = {
        {"push", ZMQ_PUSH}, {"pull", ZMQ_PULL}, {"req", ZMQ_REQ}, {"rep", ZMQ_REP},
        {"dealer", ZMQ_DEALER}, {"router", ZMQ_ROUTER}, {"pub", ZMQ_PUB}, {"sub", ZMQ_SUB}};
    int kind = -1;
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (!strcmp (role, roles[i].name))
            kind = roles[i].type;
    if (kind < 0)
        fail ("unknown role");
    void *ctx = zmq_ctx_new ();
    int server = bind; /* the binder is the mechanism's server, as in interop/web */
    pthread_t zt;
    if (server && (!strcmp (mech, "plain") || !strcmp (mech, "curve")))
        pthread_create (&zt, NULL, zap, ctx);
    void *s = zmq_socket (ctx, kind);
    int t = RECV_TIMEOUT_MS, one = 1;
    CHECK (zmq_setsockopt (s, ZMQ_RCVTIMEO, &t, sizeof t) == 0);
    CHECK (zmq_setsockopt (s, ZMQ_SNDTIMEO, &t, sizeof t) == 0);
    CHECK (zmq_setsockopt (s, ZMQ_LINGER, &t, sizeof t) == 0);
    if (kind == ZMQ_DEALER)
        CHECK (zmq_setsockopt (s, ZMQ_ROUTING_ID, DEALER_ID, strlen (DEALER_ID)) == 0);
    if (!strcmp (mech, "plain")) {
        if (server)
            CHECK (zmq_setsockopt (s, ZMQ_PLAIN_SERVER, &one, sizeof one) == 0);
        else {
            CHECK (zmq_setsockopt (s, ZMQ_PLAIN_USERNAME, PLAIN_USER, strlen (PLAIN_USER)) == 0);
            CHECK (zmq_setsockopt (s, ZMQ_PLAIN_PASSWORD, PLAIN_PASSWORD, strlen (PLAIN_PASSWORD)) == 0);
        }
    } else if (!strcmp (mech, "curve")) {
        if (server) {
            CHECK (zmq_setsockopt (s, ZMQ_CURVE_SERVER, &one, sizeof one) == 0);
            CHECK (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, SERVER_SECRET, 40) == 0);
        } else {
            CHECK (zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, SERVER_PUBLIC, 40) == 0);
            CHECK (zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, CLIENT_PUBLIC, 40) == 0);
            CHECK (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, CLIENT_SECRET, 40) == 0);
        }
    } else if (strcmp (mech, "null"))
        fail ("unknown mechanism");
    set_pem (s, ZMQ_WSS_CERT_PEM, "WSS_CERT");
    set_pem (s, ZMQ_WSS_KEY_PEM, "WSS_KEY");
    set_pem (s, ZMQ_WSS_TRUST_PEM, "WSS_TRUST");
    const char *host = getenv ("WSS_HOSTNAME");
    if (host && *host)
        CHECK (zmq_setsockopt (s, ZMQ_WSS_HOSTNAME, host, strlen (host)) == 0);
    if (kind == ZMQ_SUB)
        CHECK (zmq_setsockopt (s, ZMQ_SUBSCRIBE, "t", 1) == 0);
    void *mon = NULL;
    if (kind == ZMQ_PUB) {
        /* Before bind or connect, so no handshake can happen unseen. */
        CHECK (zmq_socket_monitor (s, "inproc://omq-peer-monitor", ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) == 0);
        mon = zmq_socket (ctx, ZMQ_PAIR);
        CHECK (zmq_connect (mon, "inproc://omq-peer-monitor") == 0);
    }
    if (bind) {
        CHECK (zmq_bind (s, ep) == 0);
        char last[256];
        size_t sz = sizeof last;
        CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, last, &sz) == 0);
        printf ("%s\n", last);
        fflush (stdout);
    } else
        CHECK (zmq_connect (s, ep) == 0);

    received_t r;
    switch (kind) {
        case ZMQ_PUSH:
            for (int k = 0; k < COUNT; k++)
                send_script (s, k, SEED);
            break;
        case ZMQ_PULL:
            for (int k = 0; k < COUNT; k++) {
                recv_message (s, &r, "message");
                expect (&r, 0, k, SEED, "message");
                received_close (&r);
            }
            break;
        case ZMQ_REQ:
        case ZMQ_DEALER:
            for (int k = 0; k < COUNT; k++) {
                send_script (s, k, SEED);
                recv_message (s, &r, "reply");
                expect (&r, 0, k, REPLY_SEED, "reply");
                received_close (&r);
            }
            break;
        case ZMQ_REP:
            for (int k = 0; k < COUNT; k++) {
                recv_message (s, &r, "request");
                expect (&r, 0, k, SEED, "request");
                received_close (&r);
                send_script (s, k, REPLY_SEED);
            }
            break;
        case ZMQ_ROUTER:
            for (int k = 0; k < COUNT; k++) {
                recv_message (s, &r, "request");
                if (r.n < 1 || zmq_msg_size (&r.part[0]) != strlen (DEALER_ID)
                    || memcmp (zmq_msg_data (&r.part[0]), DEALER_ID, strlen (DEALER_ID)) != 0)
                    fail ("request without the dealer's routing id");
                expect (&r, 1, k, SEED, "request");
                CHECK (zmq_send (s, DEALER_ID, strlen (DEALER_ID), ZMQ_SNDMORE) == (int) strlen (DEALER_ID));
                received_close (&r);
                send_script (s, k, REPLY_SEED);
            }
            break;
        case ZMQ_PUB:
            publish (s, mon);
            zmq_close (mon);
            break;
        case ZMQ_SUB:
            subscribe (s);
            break;
    }
    /* ZMQ_LINGER above: every sent message leaves before the process does. */
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
