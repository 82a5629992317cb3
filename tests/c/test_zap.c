/*
 * ZAP and message properties through the C ABI: a ZAP handler (REP at
 * inproc://zeromq.zap.01, on its own thread) approves a PLAIN client, and the server reads
 * the verdict's user id and metadata, and the connection's properties, with zmq_msg_gets;
 * a refused client's message never arrives. Runs against libzmq too (run.sh --libzmq).
 */
#include "testutil.h"

#include <pthread.h>

/* Answers `n` ZAP requests: 200 for password "secret" (user id = username, X-Role: admin),
 * 400 otherwise. Stops at the first failed receive (the context is being terminated). */
struct handler {
    void *sock;
    int n;
    int answered;
};

static void *handler_main (void *arg)
{
    struct handler *h = arg;
    for (int k = 0; k < h->n; k++) {
        char frames[8][256];
        int sizes[8] = {0};
        int count = 0;
        int more = 1;
        while (more && count < 8) {
            int rc = zmq_recv (h->sock, frames[count], 255, 0);
            if (rc < 0)
                return NULL;
            sizes[count++] = rc;
            size_t len = sizeof more;
            zmq_getsockopt (h->sock, ZMQ_RCVMORE, &more, &len);
        }
        /* version, id, domain, address, identity, mechanism, username, password */
        int ok = count == 8 && sizes[7] == 6 && memcmp (frames[7], "secret", 6) == 0;
        const unsigned char meta[] = {6, 'X', '-', 'R', 'o', 'l', 'e', 0, 0, 0, 5, 'a', 'd', 'm', 'i', 'n'};
        zmq_send (h->sock, "1.0", 3, ZMQ_SNDMORE);
        zmq_send (h->sock, "1", 1, ZMQ_SNDMORE);
        zmq_send (h->sock, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        zmq_send (h->sock, "text", 4, ZMQ_SNDMORE);
        zmq_send (h->sock, frames[6], ok ? (size_t) sizes[6] : 0, ZMQ_SNDMORE);
        zmq_send (h->sock, meta, sizeof meta, 0);
        h->answered++;
    }
    return NULL;
}

static void *plain_pair (void *ctx, const char *password, void **client)
{
    void *server = new_socket (ctx, ZMQ_PULL);
    set_int (server, ZMQ_PLAIN_SERVER, 1);
    CHECK_RC (zmq_setsockopt (server, ZMQ_ZAP_DOMAIN, "c-test", 6));
    *client = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_setsockopt (*client, ZMQ_PLAIN_USERNAME, "alice", 5));
    CHECK_RC (zmq_setsockopt (*client, ZMQ_PLAIN_PASSWORD, password, strlen (password)));
    bind_connect (server, *client, "tcp");
    return server;
}

static void test_zap_accepts_and_msg_gets (void)
{
    void *ctx = zmq_ctx_new ();
    struct handler h = {new_socket (ctx, ZMQ_REP), 1, 0};
    CHECK_RC (zmq_bind (h.sock, "inproc://zeromq.zap.01"));
    pthread_t t;
    CHECK (pthread_create (&t, NULL, handler_main, &h) == 0);
    void *client;
    void *server = plain_pair (ctx, "secret", &client);
    CHECK (zmq_send (client, "hello", 5, 0) == 5);

    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_recv (&m, server, 0) == 5);
    const char *v = zmq_msg_gets (&m, "User-Id");
    CHECK (v && strcmp (v, "alice") == 0);
    v = zmq_msg_gets (&m, "X-Role");
    CHECK (v && strcmp (v, "admin") == 0);
    v = zmq_msg_gets (&m, "Socket-Type");
    CHECK (v && strcmp (v, "PUSH") == 0);
    v = zmq_msg_gets (&m, "Peer-Address");
    CHECK (v && strcmp (v, "127.0.0.1") == 0);
    CHECK_NULL_ERR (zmq_msg_gets (&m, "No-Such-Property"), EINVAL);
    /* A copy shares the properties; they outlive the original. */
    zmq_msg_t c;
    CHECK_RC (zmq_msg_init (&c));
    CHECK_RC (zmq_msg_copy (&c, &m));
    CHECK_RC (zmq_msg_close (&m));
    v = zmq_msg_gets (&c, "User-Id");
    CHECK (v && strcmp (v, "alice") == 0);
    CHECK_RC (zmq_msg_close (&c));

    CHECK (pthread_join (t, NULL) == 0);
    CHECK (h.answered == 1);
    CHECK_RC (zmq_close (client));
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_close (h.sock));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_zap_refuses (void)
{
    void *ctx = zmq_ctx_new ();
    /* One answer (libzmq's client gives up after a refusal, oxmq's retries: either way the
     * first verdict is what this test waits for). */
    struct handler h = {new_socket (ctx, ZMQ_REP), 1, 0};
    CHECK_RC (zmq_bind (h.sock, "inproc://zeromq.zap.01"));
    pthread_t t;
    CHECK (pthread_create (&t, NULL, handler_main, &h) == 0);
    void *client;
    void *server = plain_pair (ctx, "wrong", &client);
    CHECK (zmq_send (client, "hello", 5, 0) == 5);
    CHECK (pthread_join (t, NULL) == 0);
    CHECK (h.answered == 1);
    set_int (server, ZMQ_RCVTIMEO, 150);
    char buf[16];
    CHECK_ERR (zmq_recv (server, buf, sizeof buf, 0), EAGAIN);
    CHECK_RC (zmq_close (client));
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_close (h.sock));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* A handler that reads the first frame of one request, then unbinds and closes (libzmq's
 * test_security_zap "disconnect" handler). */
static void *vanishing_handler_main (void *arg)
{
    void *sock = arg;
    char buf[64];
    CHECK (zmq_recv (sock, buf, sizeof buf, 0) == 3); /* "1.0" */
    CHECK_RC (zmq_unbind (sock, "inproc://zeromq.zap.01"));
    CHECK_RC (zmq_close (sock));
    return NULL;
}

/* The next event of a monitor (its value in *value), -1 on timeout. */
static int next_event (void *mon, int *value)
{
    zmq_msg_t m;
    zmq_msg_init (&m);
    if (zmq_msg_recv (&m, mon, 0) < 0) {
        zmq_msg_close (&m);
        return -1;
    }
    const uint8_t *d = zmq_msg_data (&m);
    uint16_t ev;
    uint32_t v;
    memcpy (&ev, d, 2);
    memcpy (&v, d + 2, 4);
    *value = (int) v;
    zmq_msg_init (&m);
    zmq_msg_recv (&m, mon, 0); /* the address frame */
    zmq_msg_close (&m);
    return ev;
}

enum mech { M_NULL, M_PLAIN, M_CURVE };

/* A ZAP handler that goes away in the middle of a request gives no verdict: the client must
 * not get in (not on this connection, nor by reconnecting), and when it leaves, the server's
 * monitor reports HANDSHAKE_FAILED_NO_DETAIL with EPIPE, as libzmq's does. */
static void zap_handler_vanishes (enum mech mech)
{
    void *ctx = zmq_ctx_new ();
    void *handler = new_socket (ctx, ZMQ_REP);
    CHECK_RC (zmq_bind (handler, "inproc://zeromq.zap.01"));
    pthread_t t;
    CHECK (pthread_create (&t, NULL, vanishing_handler_main, handler) == 0);

    void *server = new_socket (ctx, ZMQ_PULL);
    void *client = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_setsockopt (server, ZMQ_ZAP_DOMAIN, "c-test", 6));
    if (mech == M_PLAIN) {
        set_int (server, ZMQ_PLAIN_SERVER, 1);
        CHECK_RC (zmq_setsockopt (client, ZMQ_PLAIN_USERNAME, "alice", 5));
        CHECK_RC (zmq_setsockopt (client, ZMQ_PLAIN_PASSWORD, "secret", 6));
    } else if (mech == M_CURVE) {
        char spub[41], ssec[41], cpub[41], csec[41];
        CHECK (zmq_curve_keypair (spub, ssec) == 0);
        CHECK (zmq_curve_keypair (cpub, csec) == 0);
        set_int (server, ZMQ_CURVE_SERVER, 1);
        CHECK_RC (zmq_setsockopt (server, ZMQ_CURVE_SECRETKEY, ssec, 40));
        CHECK_RC (zmq_setsockopt (client, ZMQ_CURVE_SERVERKEY, spub, 40));
        CHECK_RC (zmq_setsockopt (client, ZMQ_CURVE_PUBLICKEY, cpub, 40));
        CHECK_RC (zmq_setsockopt (client, ZMQ_CURVE_SECRETKEY, csec, 40));
    }
    CHECK_RC (zmq_socket_monitor (server, "inproc://zap-vanish-mon",
                                  ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                    | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                    | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH));
    void *mon = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_connect (mon, "inproc://zap-vanish-mon"));
    /* A short reconnect interval: a client that were let in on reconnecting would be in
     * well before the receive below times out. */
    set_int (client, ZMQ_RECONNECT_IVL, 10);
    bind_connect (server, client, "tcp");
    CHECK (zmq_send (client, "hello", 5, 0) == 5);
    CHECK (pthread_join (t, NULL) == 0);

    set_int (server, ZMQ_RCVTIMEO, 400);
    char buf[16];
    CHECK_ERR (zmq_recv (server, buf, sizeof buf, 0), EAGAIN);

    CHECK_RC (zmq_close (client));
    int value = 0;
    int ev = next_event (mon, &value);
    CHECK (ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    CHECK (value == EPIPE || value == ECONNRESET);
    if (ev != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || (value != EPIPE && value != ECONNRESET))
        fprintf (stderr, "  event 0x%x value %d\n", ev, value);
    CHECK_RC (zmq_close (mon));
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_zap_handler_vanishes_null (void) { zap_handler_vanishes (M_NULL); }
static void test_zap_handler_vanishes_plain (void) { zap_handler_vanishes (M_PLAIN); }
static void test_zap_handler_vanishes_curve (void) { zap_handler_vanishes (M_CURVE); }

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_zap_accepts_and_msg_gets);
    RUN (test_zap_refuses);
    RUN (test_zap_handler_vanishes_null);
    RUN (test_zap_handler_vanishes_plain);
    RUN (test_zap_handler_vanishes_curve);
    return test_main_end ();
}
