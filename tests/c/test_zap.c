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

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_zap_accepts_and_msg_gets);
    RUN (test_zap_refuses);
    return test_main_end ();
}
