/* errno on misuse: what libzmq answers, oxmq answers, and nothing crashes. */
#include "testutil.h"

#include <pthread.h>

static void test_null_pointers (void)
{
    CHECK_NULL_ERR (zmq_socket (NULL, ZMQ_PAIR), EFAULT);
    CHECK_ERR (zmq_ctx_term (NULL), EFAULT);
    CHECK_ERR (zmq_ctx_shutdown (NULL), EFAULT);
    CHECK_ERR (zmq_ctx_set (NULL, ZMQ_IO_THREADS, 1), EFAULT);
    CHECK_ERR (zmq_ctx_get (NULL, ZMQ_IO_THREADS), EFAULT);
    /* libzmq reports a null socket as "not a socket" */
    CHECK_ERR (zmq_send (NULL, "x", 1, 0), ENOTSOCK);
    CHECK_ERR (zmq_recv (NULL, NULL, 0, 0), ENOTSOCK);
    CHECK_ERR (zmq_close (NULL), ENOTSOCK);
    CHECK_ERR (zmq_bind (NULL, "inproc://x"), ENOTSOCK);
    CHECK_ERR (zmq_setsockopt (NULL, ZMQ_LINGER, NULL, 0), ENOTSOCK);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK_ERR (zmq_msg_send (&m, NULL, 0), ENOTSOCK);
    CHECK_ERR (zmq_msg_recv (&m, NULL, 0), ENOTSOCK);
    CHECK_RC (zmq_msg_close (&m));
}

static void test_closed_socket (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    CHECK (s != NULL);
    CHECK_RC (zmq_close (s));
    CHECK_ERR (zmq_close (s), ENOTSOCK);
    CHECK_ERR (zmq_send (s, "x", 1, ZMQ_DONTWAIT), ENOTSOCK);
    CHECK_ERR (zmq_connect (s, "inproc://x"), ENOTSOCK);
    int v = 1;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_LINGER, &v, sizeof v), ENOTSOCK);
    CHECK_RC (zmq_ctx_term (ctx));
    /* a terminated context is no longer a context */
    CHECK_ERR (zmq_ctx_term (ctx), EFAULT);
}

static void test_bad_options (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_SUB);
    int v = 0;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_LINGER, &v, 2), EINVAL);      /* wrong length */
    CHECK_ERR (zmq_setsockopt (s, ZMQ_SNDHWM, &v, 8), EINVAL);
    CHECK_ERR (zmq_setsockopt (s, 9999, &v, sizeof v), EINVAL);     /* unknown option */
    int64_t big = 0;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_MAXMSGSIZE, &big, 4), EINVAL); /* int64 option */
    size_t len = 2;
    CHECK_ERR (zmq_getsockopt (s, ZMQ_LINGER, &v, &len), EINVAL);   /* buffer too small */
    len = sizeof v;
    CHECK_ERR (zmq_getsockopt (s, 9999, &v, &len), EINVAL);
    CHECK_ERR (zmq_getsockopt (s, ZMQ_SUBSCRIBE, &v, &len), EINVAL); /* write-only */
    CHECK_NULL_ERR (zmq_socket (ctx, 4242), EINVAL);                 /* unknown type */
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_bad_endpoints (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PULL);
    CHECK_ERR (zmq_bind (s, "nonsense"), EINVAL);
    CHECK_ERR (zmq_bind (s, "foo://bar"), EPROTONOSUPPORT);
    CHECK_ERR (zmq_connect (s, "tcp://"), EINVAL);
    CHECK_ERR (zmq_unbind (s, "inproc://never-bound"), ENOENT);
    void *t = zmq_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_bind (s, "inproc://taken"));
    CHECK_ERR (zmq_bind (t, "inproc://taken"), EADDRINUSE);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_close (t));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_eagain (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = zmq_socket (ctx, ZMQ_PULL);
    void *push = zmq_socket (ctx, ZMQ_PUSH);
    char buf[8];
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, ZMQ_DONTWAIT), EAGAIN);
    CHECK_ERR (zmq_send (push, "x", 1, ZMQ_DONTWAIT), EAGAIN); /* no peer */
    set_int (pull, ZMQ_RCVTIMEO, 20);
    CHECK_ERR (zmq_recv (pull, buf, sizeof buf, 0), EAGAIN);   /* timeout */
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK_ERR (zmq_msg_recv (&m, pull, ZMQ_DONTWAIT), EAGAIN);
    CHECK_RC (zmq_msg_close (&m));
    set_int (pull, ZMQ_LINGER, 0);
    set_int (push, ZMQ_LINGER, 0);
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_efsm (void)
{
    void *ctx = zmq_ctx_new ();
    void *req = new_socket (ctx, ZMQ_REQ), *rep = new_socket (ctx, ZMQ_REP);
    bind_connect (rep, req, "inproc");
    char buf[8];
    CHECK_ERR (zmq_recv (req, buf, sizeof buf, 0), EFSM); /* REQ must send first */
    CHECK_ERR (zmq_send (rep, "x", 1, 0), EFSM);          /* REP must receive first */
    send_str (req, "q", 0);
    CHECK_ERR (zmq_send (req, "q", 1, 0), EFSM);          /* REQ double send */
    expect_str (rep, "q");
    send_str (rep, "a", 0);
    expect_str (req, "a");
    CHECK_RC (zmq_close (req));
    CHECK_RC (zmq_close (rep));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_enotsup (void)
{
    void *ctx = zmq_ctx_new ();
    void *pub = new_socket (ctx, ZMQ_PUB), *pull = new_socket (ctx, ZMQ_PULL);
    char buf[8];
    CHECK_ERR (zmq_recv (pub, buf, sizeof buf, ZMQ_DONTWAIT), ENOTSUP);
    CHECK_ERR (zmq_send (pull, "x", 1, ZMQ_DONTWAIT), ENOTSUP);
    CHECK_RC (zmq_close (pub));
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_eterm_after_shutdown (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_ctx_shutdown (ctx));
    char buf[8];
    CHECK_ERR (zmq_recv (s, buf, sizeof buf, 0), ETERM);
    CHECK_ERR (zmq_recv (s, buf, sizeof buf, ZMQ_DONTWAIT), ETERM);
    CHECK_NULL_ERR (zmq_socket (ctx, ZMQ_PUSH), ETERM);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

struct blocked
{
    void *sock;
    int rc, err;
};

static void blocked_recv (void *arg)
{
    struct blocked *b = arg;
    char buf[8];
    b->rc = zmq_recv (b->sock, buf, sizeof buf, 0);
    b->err = zmq_errno ();
    zmq_close (b->sock);
}

/* zmq_ctx_term wakes a thread blocked in recv with ETERM, then waits for its close. */
static void test_eterm_wakes_blocked_recv (void)
{
    void *ctx = zmq_ctx_new ();
    struct blocked b = {zmq_socket (ctx, ZMQ_PULL), 0, 0};
    set_int (b.sock, ZMQ_LINGER, 0);
    void *t = zmq_threadstart (blocked_recv, &b);
    CHECK_RC (zmq_ctx_term (ctx));
    zmq_threadclose (t);
    CHECK (b.rc == -1 && b.err == ETERM);
}

static void test_msg_misuse_errors (void)
{
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_size (&m, 100));
    CHECK_RC (zmq_msg_close (&m));
    CHECK_ERR (zmq_msg_close (&m), EFAULT);
    /* A small (inline) body takes the quick paths of init and close: the same answers. */
    zmq_msg_t small;
    CHECK_RC (zmq_msg_init_size (&small, 1));
    CHECK (zmq_msg_size (&small) == 1);
    CHECK_RC (zmq_msg_close (&small));
    CHECK_ERR (zmq_msg_close (&small), EFAULT);
    CHECK_ERR (zmq_msg_init_size (NULL, 1), EFAULT);
    CHECK_ERR (zmq_msg_init_size (NULL, 100), EFAULT);
    CHECK_ERR (zmq_msg_close (NULL), EFAULT);
    void *ctx = zmq_ctx_new ();
    void *s = zmq_socket (ctx, ZMQ_PUSH);
    CHECK_ERR (zmq_msg_send (&m, s, ZMQ_DONTWAIT), EFAULT);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Two threads close one socket at once (a context's destroy racing a worker's own cleanup):
 * one close wins, the other gets ENOTSOCK, and the handle is recycled once, so sockets made
 * afterwards never share a handle (a shared one made every later socket of the process fail
 * with ENOTSOCK once its twin was closed). */
struct closer
{
    void *sock;
    volatile int *go;
    int rc;
};

static void *close_main (void *arg)
{
    struct closer *c = arg;
    while (!*c->go) {
    }
    c->rc = zmq_close (c->sock);
    return NULL;
}

static void test_concurrent_close (void)
{
    void *ctx = zmq_ctx_new ();
    for (int round = 0; round < 200 && t_failures == 0; round++) {
        void *s = zmq_socket (ctx, ZMQ_PAIR);
        CHECK (s != NULL);
        volatile int go = 0;
        struct closer a = {s, &go, 0}, b = {s, &go, 0};
        pthread_t ta, tb;
        CHECK (pthread_create (&ta, NULL, close_main, &a) == 0);
        CHECK (pthread_create (&tb, NULL, close_main, &b) == 0);
        go = 1;
        pthread_join (ta, NULL);
        pthread_join (tb, NULL);
        CHECK ((a.rc == 0) + (b.rc == 0) == 1);
        void *x = zmq_socket (ctx, ZMQ_PAIR);
        void *y = zmq_socket (ctx, ZMQ_PUB);
        CHECK (x != NULL && y != NULL && x != y);
        int type = -1;
        size_t len = sizeof type;
        CHECK_RC (zmq_getsockopt (x, ZMQ_TYPE, &type, &len));
        CHECK (type == ZMQ_PAIR);
        CHECK_RC (zmq_getsockopt (y, ZMQ_TYPE, &type, &len));
        CHECK (type == ZMQ_PUB);
        CHECK_RC (zmq_close (x));
        CHECK_RC (zmq_close (y));
    }
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_null_pointers);
    RUN (test_closed_socket);
    RUN (test_bad_options);
    RUN (test_bad_endpoints);
    RUN (test_eagain);
    RUN (test_efsm);
    RUN (test_enotsup);
    RUN (test_eterm_after_shutdown);
    RUN (test_eterm_wakes_blocked_recv);
    RUN (test_msg_misuse_errors);
    RUN (test_concurrent_close);
    return test_main_end ();
}
