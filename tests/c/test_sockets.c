/* Every socket type, in its usual pairs, over tcp, ipc and inproc. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

typedef void (pair_fn) (void *a, void *b);

/* Runs `fn` on a fresh (bind a, connect b) pair for each transport. */
static void each_transport (int type_a, int type_b, pair_fn *fn)
{
    for (int t = 0; t < N_TRANSPORTS; t++) {
        void *ctx = zmq_ctx_new ();
        CHECK (ctx != NULL);
        void *a = new_socket (ctx, type_a), *b = new_socket (ctx, type_b);
        int before = t_failures;
        bind_connect (a, b, transports[t]);
        fn (a, b);
        if (t_failures != before)
            fprintf (stderr, "  ... over %s\n", transports[t]);
        CHECK_RC (zmq_close (a));
        CHECK_RC (zmq_close (b));
        CHECK_RC (zmq_ctx_term (ctx));
    }
}

static void pair_fn_ (void *a, void *b)
{
    send_str (b, "ping", 0);
    expect_str (a, "ping");
    send_str (a, "pong", ZMQ_SNDMORE);
    send_str (a, "part2", 0);
    expect_str (b, "pong");
    CHECK (rcvmore (b) == 1);
    expect_str (b, "part2");
    CHECK (rcvmore (b) == 0);
}
static void test_pair (void) { each_transport (ZMQ_PAIR, ZMQ_PAIR, pair_fn_); }

static void push_pull_fn (void *pull, void *push)
{
    char buf[32];
    for (int i = 0; i < 100; i++) {
        snprintf (buf, sizeof buf, "m%d", i);
        send_str (push, buf, 0);
    }
    for (int i = 0; i < 100; i++) {
        snprintf (buf, sizeof buf, "m%d", i);
        expect_str (pull, buf);
    }
}
static void test_push_pull (void) { each_transport (ZMQ_PULL, ZMQ_PUSH, push_pull_fn); }

static void req_rep_fn (void *rep, void *req)
{
    for (int i = 0; i < 5; i++) {
        send_str (req, "question", 0);
        expect_str (rep, "question");
        send_str (rep, "answer", 0);
        expect_str (req, "answer");
    }
}
static void test_req_rep (void) { each_transport (ZMQ_REP, ZMQ_REQ, req_rep_fn); }

/* Receives frames until `want` (a subscribed topic) arrives, publishing meanwhile: a
   subscription takes effect asynchronously, so the publisher repeats until it has. */
static void pub_until_received (void *pub, void *sub, const char *topic_msg, const char *noise)
{
    char buf[256];
    for (int i = 0; i < 500; i++) {
        send_str (pub, noise, 0);
        send_str (pub, topic_msg, 0);
        zmq_pollitem_t it = {sub, 0, ZMQ_POLLIN, 0};
        if (zmq_poll (&it, 1, 10) == 1) {
            int n = zmq_recv (sub, buf, sizeof buf - 1, 0);
            CHECK (n == (int) strlen (topic_msg));
            CHECK (n >= 0 && memcmp (buf, topic_msg, (size_t) n) == 0);
            /* drain: every later message must match the filter as well */
            while ((n = zmq_recv (sub, buf, sizeof buf - 1, ZMQ_DONTWAIT)) >= 0)
                CHECK (memcmp (buf, topic_msg, strlen ("A")) == 0);
            return;
        }
    }
    fprintf (stderr, "  subscriber never received '%s'\n", topic_msg);
    t_failures++;
}

static void pub_sub_fn (void *pub, void *sub)
{
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "A", 1));
    pub_until_received (pub, sub, "A-hello", "B-noise");
}
static void test_pub_sub (void) { each_transport (ZMQ_PUB, ZMQ_SUB, pub_sub_fn); }

static void xpub_xsub_fn (void *xpub, void *xsub)
{
    const char sub_cmd[] = {1, 'A'};
    CHECK (zmq_send (xsub, sub_cmd, 2, 0) == 2);
    char buf[16];
    int n = zmq_recv (xpub, buf, sizeof buf, 0);
    CHECK (n == 2 && buf[0] == 1 && buf[1] == 'A');
    send_str (xpub, "B-noise", 0);
    send_str (xpub, "A-data", 0);
    expect_str (xsub, "A-data");
}
static void test_xpub_xsub (void) { each_transport (ZMQ_XPUB, ZMQ_XSUB, xpub_xsub_fn); }

static void xpub_sub_fn (void *xpub, void *sub)
{
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "A", 1));
    char buf[16];
    int n = zmq_recv (xpub, buf, sizeof buf, 0);
    CHECK (n == 2 && buf[0] == 1 && buf[1] == 'A');
    send_str (xpub, "A-x", 0);
    expect_str (sub, "A-x");
}
static void test_xpub_sub (void) { each_transport (ZMQ_XPUB, ZMQ_SUB, xpub_sub_fn); }

static void pub_xsub_fn (void *pub, void *xsub)
{
    const char sub_cmd[] = {1, 'A'};
    CHECK (zmq_send (xsub, sub_cmd, 2, 0) == 2);
    pub_until_received (pub, xsub, "A-hello", "B-noise");
}
static void test_pub_xsub (void) { each_transport (ZMQ_PUB, ZMQ_XSUB, pub_xsub_fn); }

static void dealer_router_fn (void *router, void *dealer)
{
    send_str (dealer, "hello", 0);
    char id[256];
    int idn = zmq_recv (router, id, sizeof id, 0);
    CHECK (idn > 0);
    CHECK (rcvmore (router));
    expect_str (router, "hello");
    CHECK (idn > 0 && zmq_send (router, id, (size_t) idn, ZMQ_SNDMORE) == idn);
    send_str (router, "back", 0);
    expect_str (dealer, "back");
}
static void test_dealer_router (void) { each_transport (ZMQ_ROUTER, ZMQ_DEALER, dealer_router_fn); }

static void req_router_fn (void *router, void *req)
{
    send_str (req, "request", 0);
    char id[256];
    int idn = zmq_recv (router, id, sizeof id, 0);
    CHECK (idn > 0 && rcvmore (router));
    expect_str (router, "");
    expect_str (router, "request");
    CHECK (idn > 0 && zmq_send (router, id, (size_t) idn, ZMQ_SNDMORE) == idn);
    send_str (router, "", ZMQ_SNDMORE);
    send_str (router, "reply", 0);
    expect_str (req, "reply");
}
static void test_req_router (void) { each_transport (ZMQ_ROUTER, ZMQ_REQ, req_router_fn); }

static void dealer_rep_fn (void *rep, void *dealer)
{
    send_str (dealer, "", ZMQ_SNDMORE);
    send_str (dealer, "q", 0);
    expect_str (rep, "q");
    send_str (rep, "a", 0);
    expect_str (dealer, "");
    expect_str (dealer, "a");
}
static void test_dealer_rep (void) { each_transport (ZMQ_REP, ZMQ_DEALER, dealer_rep_fn); }

static void dealer_dealer_fn (void *a, void *b)
{
    send_str (b, "x", 0);
    expect_str (a, "x");
    send_str (a, "y", 0);
    expect_str (b, "y");
}
static void test_dealer_dealer (void) { each_transport (ZMQ_DEALER, ZMQ_DEALER, dealer_dealer_fn); }

static void test_router_router (void)
{
    for (int t = 0; t < N_TRANSPORTS; t++) {
        void *ctx = zmq_ctx_new ();
        void *a = new_socket (ctx, ZMQ_ROUTER), *b = new_socket (ctx, ZMQ_ROUTER);
        CHECK_RC (zmq_setsockopt (a, ZMQ_ROUTING_ID, "A", 1));
        CHECK_RC (zmq_setsockopt (b, ZMQ_ROUTING_ID, "B", 1));
        set_int (b, ZMQ_ROUTER_MANDATORY, 1);
        bind_connect (a, b, transports[t]);
        /* b may route to "A" only once the handshake is done: retry on EHOSTUNREACH */
        int rc = -1;
        for (int i = 0; i < 500 && rc < 0; i++) {
            rc = zmq_send (b, "A", 1, ZMQ_SNDMORE | ZMQ_DONTWAIT);
            if (rc < 0) {
                CHECK (zmq_errno () == EHOSTUNREACH || zmq_errno () == EAGAIN);
                zmq_poll (NULL, 0, 10);
            }
        }
        CHECK (rc == 1);
        send_str (b, "hi", 0);
        expect_str (a, "B");
        expect_str (a, "hi");
        send_str (a, "B", ZMQ_SNDMORE);
        send_str (a, "ho", 0);
        expect_str (b, "A");
        expect_str (b, "ho");
        CHECK_RC (zmq_close (a));
        CHECK_RC (zmq_close (b));
        CHECK_RC (zmq_ctx_term (ctx));
    }
}

/* A ROUTER that connects with ZMQ_CONNECT_ROUTING_ID routes to that name at once, before
   any handshake, whether the peer is bound already or binds later (libzmq names the pipe
   when connect attaches it): under ROUTER_MANDATORY the send must not be EHOSTUNREACH. */
static void test_router_connect_routing_id (void)
{
    for (int t = 0; t < N_TRANSPORTS; t++)
        for (int late = 0; late < 2; late++) {
            /* A tcp port cannot be known before its bind without a race: bound first only. */
            if (late && strcmp (transports[t], "tcp") == 0)
                continue;
            void *ctx = zmq_ctx_new ();
            void *router = new_socket (ctx, ZMQ_ROUTER), *peer = new_socket (ctx, ZMQ_DEALER);
            set_int (router, ZMQ_ROUTER_MANDATORY, 1);
            char ep[256];
            size_t len = sizeof ep;
            if (strcmp (transports[t], "tcp") == 0) {
                CHECK_RC (zmq_bind (peer, "tcp://127.0.0.1:*"));
                CHECK_RC (zmq_getsockopt (peer, ZMQ_LAST_ENDPOINT, ep, &len));
            } else {
                snprintf (ep, sizeof ep, "%s://%scrid-%d-%d", transports[t],
                          strcmp (transports[t], "ipc") == 0 ? "/tmp/oxmq-ctest-" : "",
                          (int) getpid (), late);
                if (!late)
                    CHECK_RC (zmq_bind (peer, ep));
            }
            CHECK_RC (zmq_setsockopt (router, ZMQ_CONNECT_ROUTING_ID, "remoteId", 8));
            CHECK_RC (zmq_connect (router, ep));
            if (zmq_send (router, "remoteId", 8, ZMQ_SNDMORE | ZMQ_DONTWAIT) != 8) {
                fprintf (stderr, "  %s (%s): send to remoteId: %s\n", transports[t],
                         late ? "bound later" : "bound first", zmq_strerror (zmq_errno ()));
                t_failures++;
            }
            send_str (router, "hi", ZMQ_DONTWAIT);
            if (late)
                CHECK_RC (zmq_bind (peer, ep));
            expect_str (peer, "hi");
            send_str (peer, "back", 0);
            expect_str (router, "remoteId");
            expect_str (router, "back");
            CHECK_RC (zmq_close (router));
            CHECK_RC (zmq_close (peer));
            CHECK_RC (zmq_ctx_term (ctx));
        }
}

/* STREAM talks to a plain TCP peer: [routing id, data] frames; a connect shows as an empty
   frame. */
static void test_stream (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_STREAM);
    CHECK_RC (zmq_bind (s, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, ep, &len));
    int port = atoi (strrchr (ep, ':') + 1);
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons ((uint16_t) port);
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    CHECK (connect (fd, (struct sockaddr *) &addr, sizeof addr) == 0);
    char id[256];
    int idn = zmq_recv (s, id, sizeof id, 0);
    CHECK (idn > 0 && rcvmore (s));
    expect_str (s, ""); /* connect notification */
    CHECK (write (fd, "raw", 3) == 3);
    CHECK (zmq_recv (s, id, sizeof id, 0) == idn);
    expect_str (s, "raw");
    CHECK (idn > 0 && zmq_send (s, id, (size_t) idn, ZMQ_SNDMORE) == idn);
    send_str (s, "back", 0);
    char buf[8] = {0};
    CHECK (read (fd, buf, 4) == 4 && memcmp (buf, "back", 4) == 0);
    close (fd);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Large and zero-length frames, zmq_send_const, zmq_recv truncation, and the deprecated
   sendmsg/recvmsg/sendiov/recviov. */
static void frames_fn (void *pull, void *push)
{
    size_t big = 1 << 20;
    char *buf = malloc (big);
    for (size_t i = 0; i < big; i++)
        buf[i] = (char) (i * 7);
    CHECK (zmq_send (push, buf, big, 0) == (int) big);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_recv (&m, pull, 0) == (int) big);
    CHECK (memcmp (zmq_msg_data (&m), buf, big) == 0);
    CHECK_RC (zmq_msg_close (&m));
    free (buf);

    CHECK (zmq_send (push, NULL, 0, 0) == 0);
    char small[4];
    CHECK (zmq_recv (pull, small, sizeof small, 0) == 0);

    static const char konst[] = "a constant frame, long enough not to be stored inline......";
    CHECK (zmq_send_const (push, konst, sizeof konst, 0) == (int) sizeof konst);
    CHECK (zmq_recv (pull, small, sizeof small, 0) == (int) sizeof konst); /* truncated */
    CHECK (memcmp (small, konst, 4) == 0);

    CHECK_RC (zmq_msg_init_size (&m, 3));
    memcpy (zmq_msg_data (&m), "old", 3);
    CHECK (zmq_sendmsg (push, &m, 0) == 3);
    CHECK_RC (zmq_msg_close (&m));
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_recvmsg (pull, &m, 0) == 3);
    CHECK_RC (zmq_msg_close (&m));

    struct iovec out[2] = {{"ab", 2}, {"cde", 3}};
    /* libzmq's contract: the caller's flags apply to every part, SNDMORE is dropped from the
       last one; recviov returns the number of parts */
    CHECK (zmq_sendiov (push, out, 2, ZMQ_SNDMORE) >= 0);
    struct iovec in[4];
    size_t count = 4;
    /* Null vectors and counts are EINVAL, as in libzmq (test_iov). */
    CHECK_ERR (zmq_sendiov (push, NULL, 2, 0), EINVAL);
    CHECK_ERR (zmq_recviov (pull, in, NULL, 0), EINVAL);
    CHECK_ERR (zmq_recviov (pull, NULL, &count, 0), EINVAL);
    CHECK (zmq_recviov (pull, in, &count, 0) == 2);
    CHECK (count == 2);
    if (count == 2) {
        CHECK (in[0].iov_len == 2 && memcmp (in[0].iov_base, "ab", 2) == 0);
        CHECK (in[1].iov_len == 3 && memcmp (in[1].iov_base, "cde", 3) == 0);
        free (in[0].iov_base);
        free (in[1].iov_base);
    }
}
static void test_frames (void) { each_transport (ZMQ_PULL, ZMQ_PUSH, frames_fn); }

/* unbind / disconnect, and LAST_ENDPOINT round trip */
static void test_unbind_disconnect (void)
{
    void *ctx = zmq_ctx_new ();
    void *a = new_socket (ctx, ZMQ_PULL), *b = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_bind (a, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_getsockopt (a, ZMQ_LAST_ENDPOINT, ep, &len));
    CHECK (len == strlen (ep) + 1);
    CHECK_RC (zmq_connect (b, ep));
    send_str (b, "one", 0);
    expect_str (a, "one");
    CHECK_RC (zmq_disconnect (b, ep));
    CHECK_ERR (zmq_disconnect (b, ep), ENOENT);
    CHECK_RC (zmq_unbind (a, ep));
    CHECK_ERR (zmq_unbind (a, ep), ENOENT);
    CHECK_RC (zmq_close (a));
    CHECK_RC (zmq_close (b));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_socket_options (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_DEALER);
    int v = 0;
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_TYPE, &v, &len));
    CHECK (v == ZMQ_DEALER && len == sizeof v);
    set_int (s, ZMQ_SNDHWM, 123);
    len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_SNDHWM, &v, &len));
    CHECK (v == 123);
    set_int (s, ZMQ_LINGER, 0);
    len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_LINGER, &v, &len));
    CHECK (v == 0);
    int64_t maxmsg = 4096, got = 0;
    CHECK_RC (zmq_setsockopt (s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof maxmsg));
    len = sizeof got;
    CHECK_RC (zmq_getsockopt (s, ZMQ_MAXMSGSIZE, &got, &len));
    CHECK (got == 4096 && len == 8);
    CHECK_RC (zmq_setsockopt (s, ZMQ_ROUTING_ID, "me", 2));
    char id[256];
    len = sizeof id;
    CHECK_RC (zmq_getsockopt (s, ZMQ_ROUTING_ID, id, &len));
    CHECK (len == 2 && memcmp (id, "me", 2) == 0);
    int fd = -1;
    len = sizeof fd;
    CHECK_RC (zmq_getsockopt (s, ZMQ_FD, &fd, &len));
    CHECK (fd >= 0);
    len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_EVENTS, &v, &len));
    CHECK ((v & ~(ZMQ_POLLIN | ZMQ_POLLOUT)) == 0);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* REP answers and closes at once (as local_lat does): every reply must still reach the REQ,
   since LINGER defaults to "deliver everything". Run with two processes, as the perf tools. */
static void test_reply_then_close (void)
{
    size_t sizes[] = {1, 4096, 65536};
    for (int t = 0; t < 2; t++) {
        for (size_t si = 0; si < 3; si++) {
            size_t size = sizes[si];
            char ep[128];
            if (t == 0)
                snprintf (ep, sizeof ep, "tcp://127.0.0.1:%d", 20000 + (int) (getpid () % 20000));
            else
                snprintf (ep, sizeof ep, "ipc:///tmp/oxmq-ctest-rtc-%d", (int) getpid ());
            int rounds = 200;
            pid_t child = fork ();
            if (child == 0) {
                void *ctx = zmq_ctx_new ();
                void *rep = zmq_socket (ctx, ZMQ_REP);
                if (zmq_bind (rep, ep) != 0)
                    _exit (2);
                zmq_msg_t m;
                zmq_msg_init (&m);
                for (int i = 0; i < rounds; i++)
                    if (zmq_msg_recv (&m, rep, 0) < 0 || zmq_msg_send (&m, rep, 0) < 0)
                        _exit (3);
                zmq_msg_close (&m);
                zmq_close (rep);
                zmq_ctx_term (ctx);
                _exit (0);
            }
            void *ctx = zmq_ctx_new ();
            void *req = new_socket (ctx, ZMQ_REQ);
            CHECK_RC (zmq_connect (req, ep));
            char *buf = calloc (1, size);
            int i;
            for (i = 0; i < rounds; i++) {
                if (zmq_send (req, buf, size, 0) != (int) size || zmq_recv (req, buf, size, 0) != (int) size)
                    break;
            }
            if (i != rounds)
                fprintf (stderr, "  %s %zu B: %d of %d replies\n", transports[t], size, i, rounds);
            CHECK (i == rounds);
            free (buf);
            int status = 0;
            waitpid (child, &status, 0);
            CHECK (WIFEXITED (status) && WEXITSTATUS (status) == 0);
            CHECK_RC (zmq_close (req));
            CHECK_RC (zmq_ctx_term (ctx));
        }
    }
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_pair);
    RUN (test_push_pull);
    RUN (test_req_rep);
    RUN (test_pub_sub);
    RUN (test_xpub_xsub);
    RUN (test_xpub_sub);
    RUN (test_pub_xsub);
    RUN (test_dealer_router);
    RUN (test_req_router);
    RUN (test_dealer_rep);
    RUN (test_dealer_dealer);
    RUN (test_router_router);
    RUN (test_router_connect_routing_id);
    /* STREAM (raw TCP peers) is not in oxmq yet: skip with the reason, and run the test
       again by itself as soon as the library can create the socket. */
    {
        void *c = zmq_ctx_new ();
        void *st = zmq_socket (c, ZMQ_STREAM);
        if (st) {
            zmq_close (st);
            zmq_ctx_term (c);
            RUN (test_stream);
        } else {
            zmq_ctx_term (c);
            printf ("skip test_stream: ZMQ_STREAM is not implemented by this library yet\n");
        }
    }
    RUN (test_frames);
    RUN (test_unbind_disconnect);
    RUN (test_socket_options);
    RUN (test_reply_then_close);
    return test_main_end ();
}
