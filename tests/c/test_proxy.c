/* zmq_proxy, zmq_proxy_steerable, and the monitor entry points. */
#include "testutil.h"

struct proxy_args
{
    void *frontend, *backend, *capture, *control;
    int rc, err;
};

static void proxy_thread (void *arg)
{
    struct proxy_args *a = arg;
    if (a->control)
        a->rc = zmq_proxy_steerable (a->frontend, a->backend, a->capture, a->control);
    else
        a->rc = zmq_proxy (a->frontend, a->backend, a->capture);
    a->err = zmq_errno ();
    zmq_close (a->frontend);
    zmq_close (a->backend);
    if (a->capture)
        zmq_close (a->capture);
    if (a->control)
        zmq_close (a->control);
}

/* PULL -> PUSH streamer with a capture socket; ends with ETERM on context shutdown. */
static void test_proxy_capture (void)
{
    void *ctx = zmq_ctx_new ();
    struct proxy_args a = {new_socket (ctx, ZMQ_PULL), new_socket (ctx, ZMQ_PUSH),
                           new_socket (ctx, ZMQ_PUSH), NULL, 0, 0};
    CHECK_RC (zmq_bind (a.frontend, "inproc://fe"));
    CHECK_RC (zmq_bind (a.backend, "inproc://be"));
    CHECK_RC (zmq_bind (a.capture, "inproc://cap"));
    void *client = new_socket (ctx, ZMQ_PUSH), *worker = new_socket (ctx, ZMQ_PULL),
         *tap = new_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_connect (client, "inproc://fe"));
    CHECK_RC (zmq_connect (worker, "inproc://be"));
    CHECK_RC (zmq_connect (tap, "inproc://cap"));
    void *t = zmq_threadstart (proxy_thread, &a);
    send_str (client, "one", ZMQ_SNDMORE);
    send_str (client, "two", 0);
    expect_str (worker, "one");
    CHECK (rcvmore (worker));
    expect_str (worker, "two");
    expect_str (tap, "one");
    CHECK (rcvmore (tap));
    expect_str (tap, "two");
    CHECK_RC (zmq_ctx_shutdown (ctx));
    zmq_threadclose (t);
    CHECK (a.rc == -1 && a.err == ETERM);
    zmq_close (client);
    zmq_close (worker);
    zmq_close (tap);
    CHECK_RC (zmq_ctx_term (ctx));
}

static uint64_t stat_frame (void *s)
{
    uint64_t v = 0;
    CHECK (zmq_recv (s, &v, sizeof v, 0) == sizeof v);
    return v;
}

/* ROUTER/DEALER queue steered over a PAIR control socket (commands need no reply). */
static void test_proxy_steerable (void)
{
    void *ctx = zmq_ctx_new ();
    struct proxy_args a = {new_socket (ctx, ZMQ_ROUTER), new_socket (ctx, ZMQ_DEALER), NULL,
                           new_socket (ctx, ZMQ_PAIR), 0, 0};
    CHECK_RC (zmq_bind (a.frontend, "inproc://sfe"));
    CHECK_RC (zmq_bind (a.backend, "inproc://sbe"));
    CHECK_RC (zmq_bind (a.control, "inproc://sctl"));
    void *req = new_socket (ctx, ZMQ_REQ), *rep = new_socket (ctx, ZMQ_REP),
         *ctl = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_connect (req, "inproc://sfe"));
    CHECK_RC (zmq_connect (rep, "inproc://sbe"));
    CHECK_RC (zmq_connect (ctl, "inproc://sctl"));
    void *t = zmq_threadstart (proxy_thread, &a);

    send_str (req, "hello", 0);
    expect_str (rep, "hello");
    send_str (rep, "world", 0);
    expect_str (req, "world");

    send_str (ctl, "STATISTICS", 0);
    uint64_t st[8];
    for (int i = 0; i < 8; i++) {
        st[i] = stat_frame (ctl);
        CHECK (rcvmore (ctl) == (i < 7));
    }
    /* one request in at the frontend and out at the backend, one reply the other way */
    CHECK (st[0] == 1 && st[2] == 1 && st[4] == 1 && st[6] == 1);
    CHECK (st[1] > 0 && st[1] == st[7] && st[3] == st[5]);

    send_str (ctl, "PAUSE", 0);
    send_str (ctl, "RESUME", 0);
    send_str (req, "again", 0);
    expect_str (rep, "again");
    send_str (rep, "ok", 0);
    expect_str (req, "ok");

    send_str (ctl, "TERMINATE", 0);
    zmq_threadclose (t);
    CHECK (a.rc == 0);
    zmq_close (req);
    zmq_close (rep);
    zmq_close (ctl);
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Monitoring works; stopping it delivers MONITOR_STOPPED (test_monitor.c has the details). */
static void test_monitor_entry_points (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PUB);
    int rc = zmq_socket_monitor (s, "inproc://mon", ZMQ_EVENT_ALL);
    CHECK (rc == 0 || zmq_errno () == ENOTSUP);
    if (rc == 0) {
        /* drain the monitor until it reports being stopped, or its queue blocks ctx_term */
        void *mon = new_socket (ctx, ZMQ_PAIR);
        CHECK_RC (zmq_connect (mon, "inproc://mon"));
        CHECK_RC (zmq_socket_monitor (s, NULL, 0));
        zmq_msg_t m;
        zmq_msg_init (&m);
        while (zmq_msg_recv (&m, mon, 0) >= 0) {
            uint16_t ev = 0;
            if (zmq_msg_size (&m) >= 2)
                memcpy (&ev, zmq_msg_data (&m), 2);
            zmq_msg_recv (&m, mon, 0); /* address frame */
            if (ev == ZMQ_EVENT_MONITOR_STOPPED)
                break;
        }
        zmq_msg_close (&m);
        CHECK_RC (zmq_close (mon));
    }
    CHECK_ERR (zmq_socket_monitor (NULL, "inproc://mon2", ZMQ_EVENT_ALL), ENOTSOCK);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* One REP as both frontend and backend is libzmq's echo device (test_proxy_single_socket);
 * the control socket is a REQ that has already sent its request, so TERMINATE comes as its
 * reply. */
static void test_proxy_single_socket (void)
{
    void *ctx = zmq_ctx_new ();
    void *rep = new_socket (ctx, ZMQ_REP);
    void *boss = new_socket (ctx, ZMQ_REP);
    CHECK_RC (zmq_bind (boss, "inproc://single-ctl"));
    struct proxy_args a = {rep, rep, NULL, new_socket (ctx, ZMQ_REQ), -1, 0};
    CHECK_RC (zmq_connect (a.control, "inproc://single-ctl"));
    send_str (a.control, "ready", 0);
    expect_str (boss, "ready");
    void *req = new_socket (ctx, ZMQ_REQ);
    bind_connect (rep, req, "tcp");
    struct proxy_args *pa = &a;
    /* proxy_thread closes frontend and backend: the same handle twice, the second ENOTSOCK. */
    void *t = zmq_threadstart (proxy_thread, pa);
    send_str (req, "msg1", 0);
    expect_str (req, "msg1");
    send_str (req, "msg22", 0);
    expect_str (req, "msg22");
    send_str (boss, "TERMINATE", 0);
    zmq_threadclose (t);
    CHECK (a.rc == 0);
    CHECK_RC (zmq_close (req));
    CHECK_RC (zmq_close (boss));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Closing a proxy's socket from another thread stops it with ENOTSOCK (libzmq's answer),
 * and sockets made afterwards work: a proxy left running on closed sockets kept their
 * recycled handles, so later sockets of the process acted strangely or failed with ENOTSOCK. */
static void test_proxy_stops_when_its_sockets_close (void)
{
    void *ctx = zmq_ctx_new ();
    struct proxy_args a = {new_socket (ctx, ZMQ_ROUTER), new_socket (ctx, ZMQ_DEALER), NULL,
                           new_socket (ctx, ZMQ_PAIR), 0, 0};
    CHECK_RC (zmq_bind (a.frontend, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_bind (a.backend, "tcp://127.0.0.1:*"));
    void *boss = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_bind (a.control, "inproc://closing-ctl"));
    CHECK_RC (zmq_connect (boss, "inproc://closing-ctl"));
    void *t = zmq_threadstart (proxy_thread, &a);
    /* The proxy answers STATISTICS once it runs. */
    send_str (boss, "STATISTICS", 0);
    for (int i = 0; i < 8; i++) {
        char v[8];
        CHECK (zmq_recv (boss, v, sizeof v, 0) == 8);
    }
    /* The frontend only: the proxy's thread closes the backend as it leaves. */
    CHECK_RC (zmq_close (a.frontend));
    zmq_threadclose (t);
    CHECK (a.rc == -1 && a.err == ENOTSOCK);
    void *x = new_socket (ctx, ZMQ_PAIR);
    void *y = new_socket (ctx, ZMQ_PAIR);
    bind_connect (x, y, "inproc");
    send_str (y, "after", 0);
    expect_str (x, "after");
    CHECK_RC (zmq_close (x));
    CHECK_RC (zmq_close (y));
    CHECK_RC (zmq_close (boss));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_proxy_capture);
    RUN (test_proxy_steerable);
    RUN (test_proxy_single_socket);
    RUN (test_proxy_stops_when_its_sockets_close);
    RUN (test_monitor_entry_points);
    return test_main_end ();
}
