/* Options through the C ABI (zmq_setsockopt(3), zmq_ctx_set(3)): XPUB_MANUAL with
   XPUB_WELCOME_MSG, XPUB_NODROP, INVERT_MATCHING, CONFLATE, PROBE_ROUTER, REQ_RELAXED with
   REQ_CORRELATE, ROUTER_NOTIFY (draft API), CONNECT_ROUTING_ID and ZMQ_BLOCKY. */
#include "testutil.h"

/* Receives one frame into buf; returns its length (-1 on error). */
static int recv_frame (void *s, char *buf, size_t cap)
{
    int n = zmq_recv (s, buf, cap, 0);
    CHECK (n >= 0);
    return n;
}

static void test_xpub_manual_welcome (void)
{
    void *ctx = zmq_ctx_new ();
    void *xpub = new_socket (ctx, ZMQ_XPUB), *sub = new_socket (ctx, ZMQ_SUB);
    set_int (xpub, ZMQ_XPUB_MANUAL, 1);
    CHECK_RC (zmq_setsockopt (xpub, ZMQ_XPUB_WELCOME_MSG, "W", 1));
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0));
    bind_connect (xpub, sub, "tcp");
    char buf[64];
    /* Manual mode passes the subscription up and applies nothing. */
    CHECK (recv_frame (xpub, buf, sizeof buf) == 1 && buf[0] == 1);
    expect_str (sub, "W");
    /* Apply "A" to that subscriber instead of "". */
    CHECK_RC (zmq_setsockopt (xpub, ZMQ_SUBSCRIBE, "A", 1));
    send_str (xpub, "B1", 0);
    send_str (xpub, "A1", 0);
    expect_str (sub, "A1");
    CHECK_RC (zmq_close (xpub));
    CHECK_RC (zmq_close (sub));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_xpub_nodrop (void)
{
    void *ctx = zmq_ctx_new ();
    void *xpub = new_socket (ctx, ZMQ_XPUB), *sub = new_socket (ctx, ZMQ_SUB);
    set_int (xpub, ZMQ_XPUB_NODROP, 1);
    set_int (xpub, ZMQ_SNDHWM, 2);
    set_int (sub, ZMQ_RCVHWM, 2);
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0));
    bind_connect (xpub, sub, "inproc");
    char buf[64];
    CHECK (recv_frame (xpub, buf, sizeof buf) == 1);
    int sent = 0;
    while (sent < 1000 && zmq_send (xpub, "x", 1, ZMQ_DONTWAIT) == 1)
        sent++;
    CHECK (sent < 1000 && zmq_errno () == EAGAIN);
    for (int i = 0; i < sent; i++)
        expect_str (sub, "x");
    CHECK_RC (zmq_close (xpub));
    CHECK_RC (zmq_close (sub));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_invert_matching (void)
{
    void *ctx = zmq_ctx_new ();
    void *pub = new_socket (ctx, ZMQ_PUB), *sub = new_socket (ctx, ZMQ_SUB);
    set_int (pub, ZMQ_INVERT_MATCHING, 1);
    set_int (sub, ZMQ_INVERT_MATCHING, 1);
    int v = 0;
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (sub, ZMQ_INVERT_MATCHING, &v, &len));
    CHECK (v == 1);
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "A", 1));
    bind_connect (pub, sub, "inproc");
    /* inproc subscriptions are in the pipe before the first send. */
    send_str (pub, "A1", 0);
    send_str (pub, "B1", 0);
    expect_str (sub, "B1");
    CHECK_RC (zmq_close (pub));
    CHECK_RC (zmq_close (sub));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_conflate (void)
{
    void *ctx = zmq_ctx_new ();
    void *push = new_socket (ctx, ZMQ_PUSH), *pull = new_socket (ctx, ZMQ_PULL);
    set_int (push, ZMQ_CONFLATE, 1);
    char ep[64];
    /* ipc, not inproc: libzmq's inproc connect-before-bind takes the conflated message for
       the routing id and drops it. */
    snprintf (ep, sizeof ep, "ipc:///tmp/oxmq-ctest-conflate-%d", (int) getpid ());
    CHECK_RC (zmq_connect (push, ep)); /* before the bind: messages queue */
    for (int i = 0; i < 10; i++) {
        char m[8];
        snprintf (m, sizeof m, "m%d", i);
        send_str (push, m, ZMQ_DONTWAIT);
    }
    CHECK_RC (zmq_bind (pull, ep));
    expect_str (pull, "m9");
    set_int (pull, ZMQ_RCVTIMEO, 100);
    char buf[8];
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, 0), EAGAIN);
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_probe_router (void)
{
    void *ctx = zmq_ctx_new ();
    void *router = new_socket (ctx, ZMQ_ROUTER), *dealer = new_socket (ctx, ZMQ_DEALER);
    CHECK_RC (zmq_setsockopt (dealer, ZMQ_ROUTING_ID, "D", 1));
    set_int (dealer, ZMQ_PROBE_ROUTER, 1);
    bind_connect (router, dealer, "tcp");
    expect_str (router, "D");
    CHECK (rcvmore (router));
    expect_str (router, "");
    CHECK_RC (zmq_close (router));
    CHECK_RC (zmq_close (dealer));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_req_relaxed_correlate (void)
{
    void *ctx = zmq_ctx_new ();
    void *router = new_socket (ctx, ZMQ_ROUTER), *req = new_socket (ctx, ZMQ_REQ);
    set_int (req, ZMQ_REQ_RELAXED, 1);
    set_int (req, ZMQ_REQ_CORRELATE, 1);
    bind_connect (router, req, "ipc");
    send_str (req, "q1", 0);
    send_str (req, "q2", 0); /* relaxed: no EFSM */
    char id[256], rid1[8], rid2[8], buf[64];
    int idn = recv_frame (router, id, sizeof id);
    CHECK (recv_frame (router, rid1, sizeof rid1) == 4);
    CHECK (recv_frame (router, buf, sizeof buf) == 0);
    expect_str (router, "q1");
    CHECK (recv_frame (router, buf, sizeof buf) == idn);
    CHECK (recv_frame (router, rid2, sizeof rid2) == 4);
    CHECK (recv_frame (router, buf, sizeof buf) == 0);
    expect_str (router, "q2");
    /* The reply to q1 is dropped, the reply to q2 received. */
    const char *replies[2] = {"r1", "r2"};
    char *rids[2] = {rid1, rid2};
    for (int i = 0; i < 2; i++) {
        CHECK (zmq_send (router, id, (size_t) idn, ZMQ_SNDMORE) == idn);
        CHECK (zmq_send (router, rids[i], 4, ZMQ_SNDMORE) == 4);
        CHECK (zmq_send (router, "", 0, ZMQ_SNDMORE) == 0);
        send_str (router, replies[i], 0);
    }
    expect_str (req, "r2");
    CHECK_RC (zmq_close (router));
    CHECK_RC (zmq_close (req));
    CHECK_RC (zmq_ctx_term (ctx));
}

#ifdef ZMQ_ROUTER_NOTIFY
static void test_router_notify (void)
{
    void *ctx = zmq_ctx_new ();
    void *router = new_socket (ctx, ZMQ_ROUTER), *dealer = new_socket (ctx, ZMQ_DEALER);
    set_int (router, ZMQ_ROUTER_NOTIFY, ZMQ_NOTIFY_CONNECT | ZMQ_NOTIFY_DISCONNECT);
    CHECK_RC (zmq_setsockopt (dealer, ZMQ_ROUTING_ID, "D", 1));
    bind_connect (router, dealer, "tcp");
    expect_str (router, "D");
    expect_str (router, "");
    CHECK_RC (zmq_close (dealer));
    expect_str (router, "D");
    expect_str (router, "");
    CHECK_RC (zmq_close (router));
    CHECK_RC (zmq_ctx_term (ctx));
}
#endif

static void test_connect_routing_id (void)
{
    void *ctx = zmq_ctx_new ();
    void *server = new_socket (ctx, ZMQ_ROUTER), *client = new_socket (ctx, ZMQ_ROUTER);
    CHECK_RC (zmq_setsockopt (client, ZMQ_ROUTING_ID, "C", 1));
    CHECK_RC (zmq_setsockopt (client, ZMQ_CONNECT_ROUTING_ID, "S", 1));
    set_int (client, ZMQ_ROUTER_MANDATORY, 1);
    bind_connect (server, client, "ipc");
    /* Routable under the connect routing id once the handshake is done. */
    int ok = 0;
    for (int i = 0; i < 500 && !ok; i++) {
        if (zmq_send (client, "S", 1, ZMQ_SNDMORE | ZMQ_DONTWAIT) == 1) {
            send_str (client, "hi", 0);
            ok = 1;
        } else
            zmq_poll (NULL, 0, 10); /* retry for up to 5 s: the connection has no event */
    }
    CHECK (ok);
    expect_str (server, "C");
    expect_str (server, "hi");
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_close (client));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_ctx_blocky (void)
{
    void *ctx = zmq_ctx_new ();
    CHECK (zmq_ctx_get (ctx, ZMQ_BLOCKY) == 1);
    CHECK_RC (zmq_ctx_set (ctx, ZMQ_BLOCKY, 0));
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    int linger = 7;
    size_t len = sizeof linger;
    CHECK_RC (zmq_getsockopt (s, ZMQ_LINGER, &linger, &len));
    CHECK (linger == 0);
    CHECK_RC (zmq_connect (s, "tcp://127.0.0.1:1"));
    send_str (s, "lost", 0);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx)); /* does not wait for the undeliverable message */
}

/* Options and answers libzmq's test programs rely on (issue 19). */
static void test_libzmq_option_answers (void)
{
    void *ctx = zmq_ctx_new ();
    void *req = new_socket (ctx, ZMQ_REQ);
    set_int (req, ZMQ_REQ_CORRELATE, 2); /* any value >= 0 is a boolean */
    set_int (req, ZMQ_REQ_RELAXED, 10);
    CHECK_ERR (zmq_setsockopt (req, ZMQ_REQ_CORRELATE, &(int){-1}, sizeof (int)), EINVAL);
    void *s = new_socket (ctx, ZMQ_SUB);
    int v = -1;
    size_t len = sizeof v;
    set_int (s, ZMQ_MULTICAST_MAXTPDU, 1000);
    CHECK_RC (zmq_getsockopt (s, ZMQ_MULTICAST_MAXTPDU, &v, &len));
    CHECK (v == 1000);
    CHECK_ERR (zmq_setsockopt (s, ZMQ_MULTICAST_MAXTPDU, &(int){0}, sizeof (int)), EINVAL);
    set_int (s, ZMQ_MULTICAST_LOOP, 0);
    CHECK_RC (zmq_getsockopt (s, ZMQ_MULTICAST_LOOP, &v, &len));
    CHECK (v == 0);
    set_int (s, ZMQ_LOOPBACK_FASTPATH, 1);
    CHECK_RC (zmq_getsockopt (s, ZMQ_LOOPBACK_FASTPATH, &v, &len));
    CHECK (v == 1);
    CHECK_RC (zmq_getsockopt (s, ZMQ_THREAD_SAFE, &v, &len));
    CHECK (v == 0);
    /* An int answer clears the rest of a larger buffer, as libzmq's. */
    int64_t more;
    memset (&more, 0xFF, sizeof more);
    len = sizeof more;
    CHECK_RC (zmq_getsockopt (s, ZMQ_RCVMORE, &more, &len));
    CHECK (len == sizeof (int) && more == 0);
    /* Context thread options refuse their defaults (-1) and other negative values. */
    CHECK_ERR (zmq_ctx_set (ctx, ZMQ_THREAD_PRIORITY, -1), EINVAL);
    CHECK_ERR (zmq_ctx_set (ctx, ZMQ_THREAD_SCHED_POLICY, -1), EINVAL);
    /* A wildcard endpoint cannot be unbound by the wildcard (only by what it resolved to). */
    void *push = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_bind (push, "tcp://127.0.0.1:*"));
    CHECK_ERR (zmq_unbind (push, "tcp://127.0.0.1:*"), ENOENT);
    CHECK_RC (zmq_bind (push, "ipc://*"));
    CHECK_ERR (zmq_unbind (push, "ipc://*"), ENOENT);
    char ep[256];
    len = sizeof ep;
    CHECK_RC (zmq_getsockopt (push, ZMQ_LAST_ENDPOINT, ep, &len));
    CHECK_RC (zmq_unbind (push, ep));
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_close (req));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* ZMQ_SOCKS_PROXY: NULL unsets it, an empty string is refused; strings read back with their
 * NUL. (The handshake itself is tested in crates/oxmq/tests/socks.rs.) */
static void test_socks_options (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_SUB);
    char buf[300];
    size_t len = sizeof buf;
    CHECK_RC (zmq_setsockopt (s, ZMQ_SOCKS_PROXY, NULL, 0));
    CHECK_RC (zmq_getsockopt (s, ZMQ_SOCKS_PROXY, buf, &len));
    CHECK (len == 1 && buf[0] == 0);
    CHECK_ERR (zmq_setsockopt (s, ZMQ_SOCKS_PROXY, "", 0), EINVAL);
    CHECK_RC (zmq_setsockopt (s, ZMQ_SOCKS_PROXY, "somehost:1080", 13));
    len = sizeof buf;
    CHECK_RC (zmq_getsockopt (s, ZMQ_SOCKS_PROXY, buf, &len));
    CHECK (len == 14 && strcmp (buf, "somehost:1080") == 0);
#ifdef ZMQ_SOCKS_USERNAME
    memset (buf, 'a', sizeof buf);
    CHECK_RC (zmq_setsockopt (s, ZMQ_SOCKS_USERNAME, buf, 255));
    CHECK_ERR (zmq_setsockopt (s, ZMQ_SOCKS_USERNAME, buf, 256), EINVAL);
    CHECK_RC (zmq_setsockopt (s, ZMQ_SOCKS_PASSWORD, NULL, 0));
    CHECK_ERR (zmq_setsockopt (s, ZMQ_SOCKS_PASSWORD, buf, 256), EINVAL);
#endif
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_xpub_manual_welcome);
    RUN (test_xpub_nodrop);
    RUN (test_invert_matching);
    RUN (test_conflate);
    RUN (test_probe_router);
    RUN (test_req_relaxed_correlate);
#ifdef ZMQ_ROUTER_NOTIFY
    RUN (test_router_notify);
#endif
    RUN (test_connect_routing_id);
    RUN (test_ctx_blocky);
    RUN (test_libzmq_option_answers);
    RUN (test_socks_options);
    return test_main_end ();
}
