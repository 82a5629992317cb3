/* zmq_poll, ZMQ_FD/ZMQ_EVENTS, and the zmq_poller_* family. */
#include "testutil.h"

#include <limits.h>
#include <pthread.h>

static void test_zmq_poll (void)
{
    for (int t = 0; t < N_TRANSPORTS; t++) {
        void *ctx = zmq_ctx_new ();
        void *pull = new_socket (ctx, ZMQ_PULL), *push = new_socket (ctx, ZMQ_PUSH);
        bind_connect (pull, push, transports[t]);
        zmq_pollitem_t items[3] = {{pull, 0, ZMQ_POLLIN, 0}, {push, 0, ZMQ_POLLOUT, 0},
                                   {pull, 0, ZMQ_POLLIN | ZMQ_POLLOUT, 0}};
        CHECK (zmq_poll (items, 1, 10) == 0);
        CHECK (items[0].revents == 0);
        /* PUSH becomes writable once connected */
        CHECK (zmq_poll (&items[1], 1, 5000) == 1);
        CHECK (items[1].revents == ZMQ_POLLOUT);
        send_str (push, "x", 0);
        CHECK (zmq_poll (items, 1, 5000) == 1);
        /* the same socket twice in one array */
        int n = zmq_poll (items, 3, 0);
        CHECK (n == 3);
        CHECK (items[0].revents == ZMQ_POLLIN);
        CHECK (items[2].revents == ZMQ_POLLIN); /* PULL is never writable */
        expect_str (pull, "x");
        CHECK_RC (zmq_close (pull));
        CHECK_RC (zmq_close (push));
        CHECK_RC (zmq_ctx_term (ctx));
    }
}

static void test_zmq_poll_fd (void)
{
    int p[2];
    CHECK (pipe (p) == 0);
    zmq_pollitem_t it = {NULL, p[0], ZMQ_POLLIN, 0};
    CHECK (zmq_poll (&it, 1, 0) == 0);
    CHECK (write (p[1], "x", 1) == 1);
    CHECK (zmq_poll (&it, 1, 1000) == 1 && it.revents == ZMQ_POLLIN);
    close (p[0]);
    close (p[1]);
    /* zero items: sleeps for the timeout, returns 0 */
    CHECK (zmq_poll (NULL, 0, 1) == 0);
    CHECK_ERR (zmq_poll (NULL, 1, 0), EFAULT);
}

/* ZMQ_FD signals (edge-triggered) that ZMQ_EVENTS may have changed. */
static void test_fd_events (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = new_socket (ctx, ZMQ_PULL), *push = new_socket (ctx, ZMQ_PUSH);
    bind_connect (pull, push, "tcp");
    int fd = -1;
    size_t len = sizeof fd;
    CHECK_RC (zmq_getsockopt (pull, ZMQ_FD, &fd, &len));
    send_str (push, "hello", 0);
    int events = 0, got = 0;
    for (int i = 0; i < 500 && !got; i++) {
        len = sizeof events;
        CHECK_RC (zmq_getsockopt (pull, ZMQ_EVENTS, &events, &len));
        if (events & ZMQ_POLLIN) {
            got = 1;
            break;
        }
        zmq_pollitem_t it = {NULL, fd, ZMQ_POLLIN, 0};
        zmq_poll (&it, 1, 10);
    }
    CHECK (got);
    char buf[16];
    CHECK (zmq_recv (pull, buf, sizeof buf, ZMQ_DONTWAIT) == 5);
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_ctx_term (ctx));
}

#ifdef ZMQ_BUILD_DRAFT_API
static void test_poller (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = new_socket (ctx, ZMQ_PULL), *push = new_socket (ctx, ZMQ_PUSH);
    bind_connect (pull, push, "inproc");
    void *poller = zmq_poller_new ();
    CHECK (poller != NULL);
    zmq_poller_event_t ev;
    /* empty poller: a finite wait times out, an infinite one is refused */
    CHECK_ERR (zmq_poller_wait (poller, &ev, 0), EAGAIN);
    CHECK_RC (zmq_poller_add (poller, pull, (void *) 0x42, ZMQ_POLLIN));
    CHECK_ERR (zmq_poller_add (poller, pull, NULL, ZMQ_POLLIN), EINVAL);
    CHECK (zmq_poller_size (poller) == 1);
    CHECK_ERR (zmq_poller_wait (poller, &ev, 10), EAGAIN);
    send_str (push, "x", 0);
    CHECK (zmq_poller_wait (poller, &ev, 5000) == 0);
    CHECK (ev.socket == pull && ev.user_data == (void *) 0x42 && ev.events == ZMQ_POLLIN);
    expect_str (pull, "x");

    CHECK_RC (zmq_poller_add (poller, push, NULL, ZMQ_POLLOUT));
    zmq_poller_event_t evs[4];
    CHECK (zmq_poller_wait_all (poller, evs, 4, 5000) == 1);
    CHECK (evs[0].socket == push && evs[0].events == ZMQ_POLLOUT);
    CHECK_RC (zmq_poller_modify (poller, push, ZMQ_POLLIN));
    CHECK_ERR (zmq_poller_wait_all (poller, evs, 4, 0), EAGAIN);
    CHECK_RC (zmq_poller_remove (poller, push));
    CHECK_ERR (zmq_poller_remove (poller, push), EINVAL);
    CHECK_ERR (zmq_poller_modify (poller, push, ZMQ_POLLIN), EINVAL);

    int p[2];
    CHECK (pipe (p) == 0);
    CHECK_RC (zmq_poller_add_fd (poller, p[0], (void *) 7, ZMQ_POLLIN));
    CHECK_ERR (zmq_poller_add_fd (poller, p[0], NULL, ZMQ_POLLIN), EINVAL);
    CHECK (write (p[1], "x", 1) == 1);
    CHECK (zmq_poller_wait_all (poller, evs, 4, 5000) == 1);
    CHECK (evs[0].socket == NULL && evs[0].fd == p[0] && evs[0].user_data == (void *) 7);
    CHECK_RC (zmq_poller_modify_fd (poller, p[0], 0));
    CHECK_ERR (zmq_poller_wait_all (poller, evs, 4, 0), EAGAIN);
    CHECK_RC (zmq_poller_remove_fd (poller, p[0]));
    CHECK_ERR (zmq_poller_remove_fd (poller, p[0]), EINVAL);
    close (p[0]);
    close (p[1]);

    zmq_fd_t pfd;
    CHECK_ERR (zmq_poller_fd (poller, &pfd), EINVAL); /* no thread-safe sockets registered */
    CHECK_RC (zmq_poller_destroy (&poller));
    CHECK (poller == NULL);
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Events outside POLLIN|POLLOUT|POLLERR|POLLPRI are EINVAL; waiting forever when no item asks
 * for an event is EFAULT (a bounded wait times out with EAGAIN), as libzmq. */
static void test_poller_arguments (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_DEALER);
    void *poller = zmq_poller_new ();
    CHECK_ERR (zmq_poller_add (poller, s, NULL, SHRT_MAX), EINVAL);
    CHECK_RC (zmq_poller_add (poller, s, NULL, 0));
    CHECK_ERR (zmq_poller_modify (poller, s, SHRT_MAX), EINVAL);
    zmq_poller_event_t ev[1];
    CHECK_ERR (zmq_poller_wait_all (poller, ev, 1, 0), EAGAIN);
    CHECK_ERR (zmq_poller_wait_all (poller, ev, 1, -1), EFAULT);
    CHECK_RC (zmq_poller_modify (poller, s, ZMQ_POLLIN));
    CHECK_ERR (zmq_poller_wait_all (poller, ev, 1, 0), EAGAIN);
    CHECK_RC (zmq_poller_destroy (&poller));
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Thread-safe sockets in a poller: zmq_poller_fd exists once one is registered, and waits
 * see their events, including across several rounds of the poller's own wait (which used to
 * lock the socket a second time). */
static void test_poller_thread_safe_sockets (void)
{
    void *ctx = zmq_ctx_new ();
    void *server = zmq_socket (ctx, ZMQ_SERVER);
    void *client = zmq_socket (ctx, ZMQ_CLIENT);
    int linger = 0;
    CHECK_RC (zmq_setsockopt (server, ZMQ_LINGER, &linger, sizeof linger));
    CHECK_RC (zmq_setsockopt (client, ZMQ_LINGER, &linger, sizeof linger));
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_bind (server, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_getsockopt (server, ZMQ_LAST_ENDPOINT, ep, &len));
    void *poller = zmq_poller_new ();
    int pfd = -1;
    CHECK_ERR (zmq_poller_fd (poller, &pfd), EINVAL);
    CHECK_RC (zmq_poller_add (poller, server, NULL, ZMQ_POLLIN));
    CHECK_RC (zmq_poller_fd (poller, &pfd));
    CHECK (pfd >= 0);
    zmq_poller_event_t ev;
    CHECK_ERR (zmq_poller_wait (poller, &ev, 0), EAGAIN);
    CHECK_RC (zmq_connect (client, ep));
    CHECK (zmq_send (client, "I", 1, 0) == 1);
    CHECK_RC (zmq_poller_wait (poller, &ev, 5000));
    CHECK (ev.socket == server && ev.fd == -1 && ev.events == ZMQ_POLLIN);
    char buf[4];
    CHECK (zmq_recv (server, buf, sizeof buf, 0) == 1);
    CHECK_RC (zmq_poller_modify (poller, server, ZMQ_POLLIN | ZMQ_POLLOUT));
    CHECK_RC (zmq_poller_wait (poller, &ev, 0));
    CHECK (ev.socket == server && ev.events == ZMQ_POLLOUT);
    CHECK_RC (zmq_poller_remove (poller, server));
    CHECK_ERR (zmq_poller_fd (poller, &pfd), EINVAL);
    CHECK_RC (zmq_poller_destroy (&poller));
    CHECK_RC (zmq_close (client));
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_ctx_term (ctx));
}

struct term_wait
{
    void *ctx;
    volatile int ready;
    int rc, err;
};

static void *wait_on_client (void *arg)
{
    struct term_wait *w = arg;
    void *client = zmq_socket (w->ctx, ZMQ_CLIENT);
    void *poller = zmq_poller_new ();
    /* Registering a thread-safe socket used to lock it twice in one call: a hang. */
    w->rc = zmq_poller_add (poller, client, NULL, ZMQ_POLLIN);
    __atomic_store_n (&w->ready, 1, __ATOMIC_RELEASE);
    zmq_poller_event_t ev;
    if (w->rc == 0) {
        w->rc = zmq_poller_wait (poller, &ev, -1);
        w->err = zmq_errno ();
    }
    zmq_poller_destroy (&poller);
    zmq_close (client);
    return NULL;
}

/* A thread waits in zmq_poller_wait on a thread-safe socket; terminating the context wakes
 * it with ETERM, and the socket's close lets the termination finish. */
static void test_poller_thread_safe_socket_and_term (void)
{
    struct term_wait w = {zmq_ctx_new (), 0, 0, 0};
    pthread_t t;
    CHECK (pthread_create (&t, NULL, wait_on_client, &w) == 0);
    while (!__atomic_load_n (&w.ready, __ATOMIC_ACQUIRE))
        sched_yield ();
    CHECK_RC (zmq_ctx_term (w.ctx));
    CHECK (pthread_join (t, NULL) == 0);
    CHECK (w.rc == -1 && w.err == ETERM);
}
#endif

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_zmq_poll);
    RUN (test_zmq_poll_fd);
    RUN (test_fd_events);
#ifdef ZMQ_BUILD_DRAFT_API
    RUN (test_poller);
    RUN (test_poller_arguments);
    RUN (test_poller_thread_safe_sockets);
    RUN (test_poller_thread_safe_socket_and_term);
#endif
    return test_main_end ();
}
