/* One end of a ws/wss/tls interop run, built against any libzmq-compatible library (libzmq
   4.3.5 with drafts, or oxmq's libzmq.so.5) from the same source.

   peer bind|connect ENDPOINT null|plain|curve rep|req|pub|sub|push|pull COUNT

   REQ sends COUNT requests and checks each reply; REP echoes COUNT requests. SUB subscribes
   to "t" and must receive COUNT "t..." messages (PUB sends until its subscriber has them all,
   with "x..." messages between, which must not arrive: for 3 s); PUSH sends, PULL receives. TLS from
   the environment: WSS_CERT, WSS_KEY, WSS_TRUST (PEM file paths), WSS_HOSTNAME. HEARTBEAT=IVL,TIMEOUT
   (ms) sets ZMQ_HEARTBEAT_IVL and ZMQ_HEARTBEAT_TIMEOUT, IDLE_MS makes REQ wait that long
   after its first reply, and then the one connection must have lasted: the socket's monitor
   must have seen exactly one CONNECTED or ACCEPTED (a heartbeat that timed out would have
   dropped it and a reconnect made another). Exits 0 on success, 1 on failure; every wait is
   bounded (5 s per message). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#ifndef ZMQ_WSS_KEY_PEM
#define ZMQ_WSS_KEY_PEM 103
#define ZMQ_WSS_CERT_PEM 104
#define ZMQ_WSS_TRUST_PEM 105
#define ZMQ_WSS_HOSTNAME 106
#endif

/* Test keys (libzmq's test suite's); never for real use. */
static const char *SERVER_PUBLIC = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char *SERVER_SECRET = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char *CLIENT_PUBLIC = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char *CLIENT_SECRET = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

#define CHECK(x)                                                                              \
    do {                                                                                      \
        if (!(x)) {                                                                           \
            fprintf (stderr, "peer: %s failed at line %d: %s\n", #x, __LINE__,              \
                     zmq_strerror (zmq_errno ()));                                            \
            exit (1);                                                                         \
        }                                                                                     \
    } while (0)

static char *slurp (const char *path)
{
    FILE *f = fopen (path, "rb");
    CHECK (f);
    static char buf[65536];
    size_t n = fread (buf, 1, sizeof buf - 1, f);
    fclose (f);
    buf[n] = 0;
    return strdup (buf);
}

static void set_pem (void *s, int option, const char *env)
{
    const char *path = getenv (env);
    if (path && *path) {
        char *pem = slurp (path);
        CHECK (zmq_setsockopt (s, option, pem, strlen (pem)) == 0);
        free (pem);
    }
}

/* A ZAP handler that lets everyone in (PLAIN needs one). */
static void *zap (void *ctx)
{
    void *h = zmq_socket (ctx, ZMQ_REP);
    CHECK (zmq_bind (h, "inproc://zeromq.zap.01") == 0);
    for (;;) {
        char frames[16][256];
        int n = 0, more = 1;
        while (more && n < 16) {
            int r = zmq_recv (h, frames[n], 255, 0);
            if (r < 0) {
                zmq_close (h);
                return NULL;
            }
            frames[n][r < 255 ? r : 255] = 0;
            size_t sz = sizeof more;
            zmq_getsockopt (h, ZMQ_RCVMORE, &more, &sz);
            n++;
        }
        zmq_send (h, "1.0", 3, ZMQ_SNDMORE);
        zmq_send (h, frames[1], strlen (frames[1]), ZMQ_SNDMORE);
        zmq_send (h, "200", 3, ZMQ_SNDMORE);
        zmq_send (h, "OK", 2, ZMQ_SNDMORE);
        zmq_send (h, "web-user", 8, ZMQ_SNDMORE);
        zmq_send (h, "", 0, 0);
    }
}

int main (int argc, char **argv)
{
    if (argc != 6) {
        fprintf (stderr, "usage: peer bind|connect ENDPOINT null|plain|curve TYPE COUNT\n");
        return 2;
    }
    int bind = strcmp (argv[1], "bind") == 0;
    const char *ep = argv[2], *mech = argv[3], *type = argv[4];
    int count = atoi (argv[5]);
    void *ctx = zmq_ctx_new ();
    int server = bind; /* the binding side is the mechanism's server */
    pthread_t zt;
    if (strcmp (mech, "plain") == 0 && server)
        pthread_create (&zt, NULL, zap, ctx);
    int kind = !strcmp (type, "rep")    ? ZMQ_REP
               : !strcmp (type, "req")  ? ZMQ_REQ
               : !strcmp (type, "pub")  ? ZMQ_PUB
               : !strcmp (type, "sub")  ? ZMQ_SUB
               : !strcmp (type, "push") ? ZMQ_PUSH
                                        : ZMQ_PULL;
    void *s = zmq_socket (ctx, kind);
    int t = 5000, zero = 0, one = 1;
    CHECK (zmq_setsockopt (s, ZMQ_RCVTIMEO, &t, sizeof t) == 0);
    CHECK (zmq_setsockopt (s, ZMQ_SNDTIMEO, &t, sizeof t) == 0);
    CHECK (zmq_setsockopt (s, ZMQ_LINGER, &t, sizeof t) == 0);
    if (!strcmp (mech, "plain")) {
        if (server)
            CHECK (zmq_setsockopt (s, ZMQ_PLAIN_SERVER, &one, sizeof one) == 0);
        else {
            CHECK (zmq_setsockopt (s, ZMQ_PLAIN_USERNAME, "alice", 5) == 0);
            CHECK (zmq_setsockopt (s, ZMQ_PLAIN_PASSWORD, "secret", 6) == 0);
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
    }
    set_pem (s, ZMQ_WSS_CERT_PEM, "WSS_CERT");
    set_pem (s, ZMQ_WSS_KEY_PEM, "WSS_KEY");
    set_pem (s, ZMQ_WSS_TRUST_PEM, "WSS_TRUST");
    const char *host = getenv ("WSS_HOSTNAME");
    if (host && *host)
        CHECK (zmq_setsockopt (s, ZMQ_WSS_HOSTNAME, host, strlen (host)) == 0);
    if (kind == ZMQ_SUB)
        CHECK (zmq_setsockopt (s, ZMQ_SUBSCRIBE, "t", 1) == 0);
    const char *hb = getenv ("HEARTBEAT");
    void *mon = NULL;
    if (hb && *hb) {
        int ivl = atoi (hb), timeout = atoi (strchr (hb, ',') ? strchr (hb, ',') + 1 : hb);
        CHECK (zmq_setsockopt (s, ZMQ_HEARTBEAT_IVL, &ivl, sizeof ivl) == 0);
        CHECK (zmq_setsockopt (s, ZMQ_HEARTBEAT_TIMEOUT, &timeout, sizeof timeout) == 0);
        CHECK (zmq_socket_monitor (s, "inproc://peer-monitor", ZMQ_EVENT_CONNECTED | ZMQ_EVENT_ACCEPTED) == 0);
        mon = zmq_socket (ctx, ZMQ_PAIR);
        CHECK (zmq_connect (mon, "inproc://peer-monitor") == 0);
    }
    const char *idle = getenv ("IDLE_MS");
    (void) zero;
    if (bind) {
        CHECK (zmq_bind (s, ep) == 0);
        char last[256];
        size_t sz = sizeof last;
        CHECK (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, last, &sz) == 0);
        printf ("%s\n", last);
        fflush (stdout);
    } else
        CHECK (zmq_connect (s, ep) == 0);

    char buf[256];
    int got = 0;
    for (int i = 0; i < count; i++) {
        char msg[64];
        int len = snprintf (msg, sizeof msg, "t%d", i);
        switch (kind) {
            case ZMQ_REQ:
                CHECK (zmq_send (s, msg, len, 0) == len);
                CHECK (zmq_recv (s, buf, sizeof buf, 0) == len + 1);
                CHECK (buf[0] == 'r' && memcmp (buf + 1, msg, len) == 0);
                if (i == 0 && idle && *idle)
                    usleep (atoi (idle) * 1000); /* the idle link the heartbeats keep */
                break;
            case ZMQ_REP: {
                int n = zmq_recv (s, buf + 1, sizeof buf - 1, 0);
                CHECK (n > 0);
                buf[0] = 'r';
                CHECK (zmq_send (s, buf, n + 1, 0) == n + 1);
                break;
            }
            case ZMQ_PUSH:
                CHECK (zmq_send (s, msg, len, 0) == len);
                break;
            case ZMQ_PULL:
            case ZMQ_SUB: {
                int n = zmq_recv (s, buf, sizeof buf, 0);
                CHECK (n > 0 && buf[0] == 't');
                got++;
                break;
            }
            case ZMQ_PUB:
                break;
        }
    }
    if (kind == ZMQ_PUB) {
        /* Publish until the subscriber has left (it exits after COUNT "t" messages). */
        for (int i = 0; i < 3000; i++) {
            char msg[64];
            int len = snprintf (msg, sizeof msg, "%c%d", i % 2 ? 'x' : 't', i);
            zmq_send (s, msg, len, ZMQ_DONTWAIT);
            usleep (1000);
        }
    }
    if (kind == ZMQ_PULL || kind == ZMQ_SUB)
        CHECK (got == count);
    if (mon) {
        int connections = 0;
        zmq_msg_t m;
        zmq_msg_init (&m);
        while (zmq_msg_recv (&m, mon, ZMQ_DONTWAIT) >= 0) {
            if (zmq_msg_more (&m))
                connections++; /* the event frame; the endpoint frame follows */
        }
        zmq_msg_close (&m);
        if (connections != 1)
            fprintf (stderr, "peer: %d connections were made, not 1\n", connections);
        CHECK (connections == 1);
        zmq_close (mon);
    }
    zmq_close (s);
    zmq_ctx_term (ctx);
    return 0;
}
