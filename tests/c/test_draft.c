/*
 * Draft socket types through the C ABI, as a libzmq program built with ZMQ_BUILD_DRAFT_API
 * uses them: CLIENT/SERVER routing ids (zmq_msg_routing_id / zmq_msg_set_routing_id), RADIO/
 * DISH groups (zmq_join, zmq_msg_set_group, zmq_msg_group), PEER (zmq_connect_peer), over
 * tcp, ipc and inproc; DGRAM over udp.
 */
#include "testutil.h"

#include <pthread.h>

#ifdef ZMQ_BUILD_DRAFT_API

static void test_client_server (void)
{
    for (int t = 0; t < N_TRANSPORTS; t++) {
        void *ctx = zmq_ctx_new ();
        void *server = new_socket (ctx, ZMQ_SERVER);
        void *client = new_socket (ctx, ZMQ_CLIENT);
        bind_connect (server, client, transports[t]);
        CHECK_ERR (zmq_send (client, "x", 1, ZMQ_SNDMORE), EINVAL);
        send_str (client, "hello", 0);
        zmq_msg_t m;
        CHECK_RC (zmq_msg_init (&m));
        CHECK (zmq_msg_recv (&m, server, 0) == 5);
        uint32_t id = zmq_msg_routing_id (&m);
        CHECK (id != 0);
        CHECK_RC (zmq_msg_close (&m));
        /* No routing id: EHOSTUNREACH. */
        CHECK_ERR (zmq_send (server, "lost", 4, 0), EHOSTUNREACH);
        CHECK_RC (zmq_msg_init_size (&m, 5));
        memcpy (zmq_msg_data (&m), "world", 5);
        CHECK_ERR (zmq_msg_set_routing_id (&m, 0), EINVAL);
        CHECK_RC (zmq_msg_set_routing_id (&m, id));
        CHECK (zmq_msg_routing_id (&m) == id);
        CHECK (zmq_msg_send (&m, server, 0) == 5);
        expect_str (client, "world");
        CHECK_RC (zmq_close (client));
        CHECK_RC (zmq_close (server));
        CHECK_RC (zmq_ctx_term (ctx));
    }
}

static void test_radio_dish (void)
{
    for (int t = 0; t < N_TRANSPORTS; t++) {
        void *ctx = zmq_ctx_new ();
        void *dish = new_socket (ctx, ZMQ_DISH);
        void *radio = new_socket (ctx, ZMQ_RADIO);
        CHECK_RC (zmq_join (dish, "weather"));
        CHECK_ERR (zmq_join (dish, "weather"), EINVAL);
        CHECK_ERR (zmq_leave (dish, "sports"), EINVAL);
        CHECK_ERR (zmq_join (radio, "weather"), ENOTSUP);
        bind_connect (dish, radio, transports[t]);
        set_int (dish, ZMQ_RCVTIMEO, 20);
        /* Send until the JOIN has reached the radio (bounded). */
        int got = 0;
        zmq_msg_t m, r;
        CHECK_RC (zmq_msg_init (&r));
        for (int i = 0; i < 500 && !got; i++) {
            CHECK_RC (zmq_msg_init_size (&m, 5));
            memcpy (zmq_msg_data (&m), "sunny", 5);
            CHECK_RC (zmq_msg_set_group (&m, "weather"));
            CHECK (strcmp (zmq_msg_group (&m), "weather") == 0);
            CHECK (zmq_msg_send (&m, radio, 0) == 5);
            CHECK_RC (zmq_msg_close (&m));
            /* Another group, which the dish must never see. */
            CHECK_RC (zmq_msg_init_size (&m, 4));
            memcpy (zmq_msg_data (&m), "goal", 4);
            CHECK_RC (zmq_msg_set_group (&m, "sports"));
            CHECK (zmq_msg_send (&m, radio, 0) == 4);
            CHECK_RC (zmq_msg_close (&m));
            if (zmq_msg_recv (&r, dish, 0) == 5) {
                got = 1;
                CHECK (memcmp (zmq_msg_data (&r), "sunny", 5) == 0);
                CHECK (strcmp (zmq_msg_group (&r), "weather") == 0);
            }
        }
        CHECK (got);
        while (zmq_msg_recv (&r, dish, 0) >= 0)
            CHECK (strcmp (zmq_msg_group (&r), "weather") == 0);
        CHECK (zmq_errno () == EAGAIN);
        /* zmq_msg_copy and zmq_msg_move carry the group. */
        zmq_msg_t c;
        CHECK_RC (zmq_msg_init (&c));
        CHECK_RC (zmq_msg_set_group (&r, "copied"));
        CHECK_RC (zmq_msg_copy (&c, &r));
        CHECK (strcmp (zmq_msg_group (&c), "copied") == 0);
        CHECK_RC (zmq_msg_close (&c));
        char long_group[300];
        memset (long_group, 'g', sizeof long_group - 1);
        long_group[sizeof long_group - 1] = 0;
        CHECK_ERR (zmq_msg_set_group (&r, long_group), EINVAL);
        CHECK_ERR (zmq_join (dish, long_group), EINVAL);
        CHECK_RC (zmq_msg_close (&r));
        CHECK_RC (zmq_leave (dish, "weather"));
        CHECK_RC (zmq_close (radio));
        CHECK_RC (zmq_close (dish));
        CHECK_RC (zmq_ctx_term (ctx));
    }
}

static void test_peer (void)
{
    void *ctx = zmq_ctx_new ();
    void *a = new_socket (ctx, ZMQ_PEER);
    void *b = new_socket (ctx, ZMQ_PEER);
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_bind (a, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_getsockopt (a, ZMQ_LAST_ENDPOINT, ep, &len));
    uint32_t id = zmq_connect_peer (b, ep);
    CHECK (id != 0);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_size (&m, 2));
    memcpy (zmq_msg_data (&m), "hi", 2);
    CHECK_RC (zmq_msg_set_routing_id (&m, id));
    CHECK (zmq_msg_send (&m, b, 0) == 2);
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_recv (&m, a, 0) == 2);
    uint32_t back = zmq_msg_routing_id (&m);
    CHECK (back != 0);
    CHECK_RC (zmq_msg_set_routing_id (&m, back));
    CHECK (zmq_msg_send (&m, a, 0) == 2);
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_recv (&m, b, 0) == 2);
    CHECK (zmq_msg_routing_id (&m) == id);
    CHECK_RC (zmq_msg_close (&m));
    void *server = new_socket (ctx, ZMQ_SERVER);
    errno = 0;
    CHECK (zmq_connect_peer (server, ep) == 0 && zmq_errno () == ENOTSUP);
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_close (a));
    CHECK_RC (zmq_close (b));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* zmq_socket_get_peer_state: ZMQ_POLLOUT while the named peer's queue has room, 0 at the
 * HWM; EHOSTUNREACH for an unknown routing id, ENOTSUP on a DEALER, ENOTSOCK on NULL. */
static void test_router_peer_state (void)
{
    void *ctx = zmq_ctx_new ();
    void *router = new_socket (ctx, ZMQ_ROUTER);
    void *dealer = new_socket (ctx, ZMQ_DEALER);
    int hwm = 5;
    CHECK_RC (zmq_setsockopt (router, ZMQ_SNDHWM, &hwm, sizeof hwm));
    CHECK_RC (zmq_setsockopt (dealer, ZMQ_RCVHWM, &hwm, sizeof hwm));
    CHECK_RC (zmq_setsockopt (dealer, ZMQ_ROUTING_ID, "X", 1));
    CHECK_RC (zmq_bind (router, "inproc://peer-state"));
    CHECK_RC (zmq_connect (dealer, "inproc://peer-state"));
    CHECK (zmq_send (dealer, "hi", 2, 0) == 2);
    char buf[16];
    CHECK (zmq_recv (router, buf, sizeof buf, 0) == 1);
    CHECK (zmq_recv (router, buf, sizeof buf, 0) == 2);
    CHECK (zmq_socket_get_peer_state (router, "X", 1) == ZMQ_POLLOUT);
    int sent = 0;
    while (zmq_socket_get_peer_state (router, "X", 1) == ZMQ_POLLOUT && sent < 100) {
        CHECK (zmq_send (router, "X", 1, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 1);
        CHECK (zmq_send (router, "m", 1, ZMQ_DONTWAIT) == 1);
        sent++;
    }
    CHECK (sent == 2 * hwm);
    CHECK (zmq_socket_get_peer_state (router, "X", 1) == 0);
    CHECK_ERR (zmq_socket_get_peer_state (router, "Y", 1), EHOSTUNREACH);
    CHECK_ERR (zmq_socket_get_peer_state (dealer, "X", 1), ENOTSUP);
    CHECK_ERR (zmq_socket_get_peer_state (NULL, "X", 1), ENOTSOCK);
    CHECK_RC (zmq_close (dealer));
    CHECK_RC (zmq_close (router));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_scatter_gather_channel (void)
{
    for (int t = 0; t < N_TRANSPORTS; t++) {
        void *ctx = zmq_ctx_new ();
        void *scatter = new_socket (ctx, ZMQ_SCATTER);
        void *gather = new_socket (ctx, ZMQ_GATHER);
        bind_connect (gather, scatter, transports[t]);
        CHECK_ERR (zmq_send (scatter, "x", 1, ZMQ_SNDMORE), EINVAL);
        send_str (scatter, "s1", 0);
        expect_str (gather, "s1");
        void *c1 = new_socket (ctx, ZMQ_CHANNEL);
        void *c2 = new_socket (ctx, ZMQ_CHANNEL);
        bind_connect (c1, c2, transports[t]);
        send_str (c2, "ping", 0);
        expect_str (c1, "ping");
        send_str (c1, "pong", 0);
        expect_str (c2, "pong");
        CHECK_RC (zmq_close (c1));
        CHECK_RC (zmq_close (c2));
        CHECK_RC (zmq_close (scatter));
        CHECK_RC (zmq_close (gather));
        CHECK_RC (zmq_ctx_term (ctx));
    }
}

/* The port a udp socket bound to "udp://127.0.0.1:*" got, from ZMQ_LAST_ENDPOINT. */
static int udp_port (void *s)
{
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len));
    const char *colon = strrchr (ep, ':');
    return colon ? atoi (colon + 1) : 0;
}

/* Sends [to, body] from `from` until `at` receives a frame (udp may drop one), at most 25
   times 200 ms; the frame received (the sender's address) is left in `addr`. */
static int dgram_exchange (void *from, const char *to, const char *body, void *at, char *addr, size_t cap)
{
    set_int (at, ZMQ_RCVTIMEO, 200);
    for (int i = 0; i < 25; i++) {
        send_str (from, to, ZMQ_SNDMORE);
        send_str (from, body, 0);
        int n = zmq_recv (at, addr, cap - 1, 0);
        if (n >= 0) {
            set_int (at, ZMQ_RCVTIMEO, 5000);
            return n;
        }
        CHECK (zmq_errno () == EAGAIN);
    }
    return -1;
}

/* DGRAM: [address, body] messages over udp, the address as libzmq writes it ("ip:port" and
   a NUL, so C reads it as a string); not thread-safe; bound, never connected. */
static void test_dgram (void)
{
    void *ctx = zmq_ctx_new ();
    void *a = new_socket (ctx, ZMQ_DGRAM);
    void *b = new_socket (ctx, ZMQ_DGRAM);
    int v = -1;
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (a, ZMQ_THREAD_SAFE, &v, &len));
    CHECK (v == 0);
    CHECK_ERR (zmq_connect (a, "udp://127.0.0.1:5555"), ENOCOMPATPROTO);
    CHECK_ERR (zmq_bind (a, "tcp://127.0.0.1:*"), ENOCOMPATPROTO);
    CHECK_RC (zmq_bind (a, "udp://127.0.0.1:*"));
    CHECK_RC (zmq_bind (b, "udp://127.0.0.1:*"));
    char to_b[64], a_text[64], addr[64];
    snprintf (to_b, sizeof to_b, "127.0.0.1:%d", udp_port (b));
    snprintf (a_text, sizeof a_text, "127.0.0.1:%d", udp_port (a));
    /* An address without SNDMORE, or one that is not an address: EINVAL. */
    CHECK_ERR (zmq_send (a, to_b, strlen (to_b), 0), EINVAL);
    CHECK_ERR (zmq_send (a, "nowhere", 7, ZMQ_SNDMORE), EINVAL);
    int n = dgram_exchange (a, to_b, "question", b, addr, sizeof addr);
    CHECK (n == (int) strlen (a_text) + 1);
    CHECK (n > 0 && addr[n - 1] == 0 && strcmp (addr, a_text) == 0);
    CHECK (rcvmore (b));
    expect_str (b, "question");
    CHECK (!rcvmore (b));
    /* The address received, NUL and all, sends the answer back. */
    CHECK (zmq_send (b, addr, (size_t) n, ZMQ_SNDMORE) == n);
    send_str (b, "answer", 0);
    char from[64];
    n = zmq_recv (a, from, sizeof from - 1, 0);
    CHECK (n > 0);
    expect_str (a, "answer");
    CHECK_RC (zmq_close (a));
    CHECK_RC (zmq_close (b));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* A thread blocked in zmq_recv on a CLIENT must not stop another thread from sending on the
   same CLIENT (libzmq's thread-safe sockets): the request goes out, the reply comes back to the
   waiting thread. With a lock held while blocking, the send would wait for the receive's
   timeout and the receive would fail. */
static void *recv_reply (void *client)
{
    char buf[16];
    int n = zmq_recv (client, buf, sizeof buf, 0);
    return (void *) (intptr_t) (n == 4 && memcmp (buf, "pong", 4) == 0);
}

static void test_threadsafe_client (void)
{
    void *ctx = zmq_ctx_new ();
    void *server = new_socket (ctx, ZMQ_SERVER);
    void *client = new_socket (ctx, ZMQ_CLIENT);
    bind_connect (server, client, "tcp");
    pthread_t t;
    CHECK (pthread_create (&t, NULL, recv_reply, client) == 0);
    /* Whether or not the thread is already waiting, the send must not wait for it. */
    send_str (client, "ping", 0);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_recv (&m, server, 0) == 4);
    CHECK_RC (zmq_msg_close (&m));
    uint32_t id = 0;
    CHECK_RC (zmq_msg_init (&m));
    send_str (client, "ping2", 0);
    CHECK (zmq_msg_recv (&m, server, 0) == 5);
    id = zmq_msg_routing_id (&m);
    CHECK_RC (zmq_msg_close (&m));
    CHECK_RC (zmq_msg_init_size (&m, 4));
    memcpy (zmq_msg_data (&m), "pong", 4);
    CHECK_RC (zmq_msg_set_routing_id (&m, id));
    CHECK (zmq_msg_send (&m, server, 0) == 4);
    void *ok = NULL;
    CHECK (pthread_join (t, &ok) == 0);
    CHECK (ok == (void *) 1);
    /* Options and other calls work from any thread while nobody blocks. */
    int v = 0;
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (client, ZMQ_TYPE, &v, &len));
    CHECK (v == ZMQ_CLIENT);
    CHECK_RC (zmq_close (client));
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_ctx_term (ctx));
}

#endif

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
#ifdef ZMQ_BUILD_DRAFT_API
    RUN (test_client_server);
    RUN (test_radio_dish);
    RUN (test_peer);
    RUN (test_router_peer_state);
    RUN (test_scatter_gather_channel);
    RUN (test_dgram);
    RUN (test_threadsafe_client);
#endif
    return test_main_end ();
}
