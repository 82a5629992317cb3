/* ZMQ_FD in an epoll loop (libzmq's edge-triggered contract, and oxmq's level-triggered
   ZMQ_OXMQ_FD_LEVEL), zmq_poller_* over many sockets, and oxmq's counters
   (oxmq_socket_stats, oxmq_socket_peer_stats). */
#include "testutil.h"

#include <sys/epoll.h>

#ifndef OXMQ_ZMQ_H
/* Built against libzmq's zmq.h: declare oxmq's extensions (the library is oxmq's). */
#define ZMQ_OXMQ_FD_LEVEL 0x4f580001
typedef struct oxmq_socket_stats_t
{
    uint64_t msgs_in, bytes_in, msgs_out, bytes_out;
    uint64_t dropped_hwm, dropped_no_route, dropped_oversized;
    uint64_t peers, connections, reconnects, handshake_failures;
    uint64_t wire_bytes_in, wire_bytes_out;
} oxmq_socket_stats_t;
typedef struct oxmq_socket_peer_stats_t
{
    uint64_t queued_out;
    int64_t queued_in;
} oxmq_socket_peer_stats_t;
int oxmq_socket_stats (void *s_, oxmq_socket_stats_t *stats_, size_t size_);
int oxmq_socket_peer_stats (void *s_, oxmq_socket_peer_stats_t *peers_, int n_);
#endif

#define NSOCK 64
#define NMSG 4000

static int get_fd (void *s)
{
    int fd = -1;
    size_t len = sizeof fd;
    CHECK_RC (zmq_getsockopt (s, ZMQ_FD, &fd, &len));
    return fd;
}

/* NSOCK PULL sockets (half tcp, half inproc) fed NMSG messages in bursts; an epoll loop
   receives them all. level: ZMQ_OXMQ_FD_LEVEL and one message per wake-up; otherwise
   EPOLLET, ZMQ_EVENTS, receive until EAGAIN. */
static void epoll_run (int level)
{
    void *ctx = zmq_ctx_new ();
    void *pull[NSOCK], *push[NSOCK];
    int ep = epoll_create1 (0);
    CHECK (ep >= 0);
    for (int i = 0; i < NSOCK; i++) {
        pull[i] = new_socket (ctx, ZMQ_PULL);
        push[i] = new_socket (ctx, ZMQ_PUSH);
        set_int (pull[i], ZMQ_RCVHWM, 0);
        set_int (push[i], ZMQ_SNDHWM, 0);
        bind_connect (pull[i], push[i], i % 2 ? "tcp" : "inproc");
        if (level) {
            set_int (pull[i], ZMQ_OXMQ_FD_LEVEL, ZMQ_POLLIN);
            int v = 0;
            size_t len = sizeof v;
            CHECK_RC (zmq_getsockopt (pull[i], ZMQ_OXMQ_FD_LEVEL, &v, &len));
            CHECK (v == ZMQ_POLLIN);
        }
        struct epoll_event ev = {.events = EPOLLIN | (level ? 0 : EPOLLET), .data = {.u32 = (uint32_t) i}};
        CHECK_RC (epoll_ctl (ep, EPOLL_CTL_ADD, get_fd (pull[i]), &ev));
    }
    unsigned seed = 12345;
    int sent = 0, got = 0, wakeups = 0, empty = 0, bursts = 0;
    int next[NSOCK] = {0}, expect[NSOCK] = {0};
    while (got < NMSG) {
        /* Interleave sending bursts with receiving, so sockets go to sleep and wake again. */
        if (sent < NMSG) {
            int i = (int) (rand_r (&seed) % NSOCK), n = 1 + (int) (rand_r (&seed) % 20);
            for (int k = 0; k < n && sent < NMSG; k++, sent++) {
                CHECK (zmq_send (push[i], &next[i], sizeof (int), 0) == sizeof (int));
                next[i]++;
            }
            bursts++;
        }
        struct epoll_event evs[64];
        int n = epoll_wait (ep, evs, 64, sent < NMSG ? 0 : 5000);
        CHECK (n >= 0);
        if (n == 0 && sent == NMSG) {
            fprintf (stderr, "  no wake-up for 5 s with %d of %d received\n", got, NMSG);
            t_failures++;
            break;
        }
        for (int e = 0; e < n; e++) {
            int i = (int) evs[e].data.u32, this = 0;
            wakeups++;
            if (!level) {
                int events = 0;
                size_t len = sizeof events;
                CHECK_RC (zmq_getsockopt (pull[i], ZMQ_EVENTS, &events, &len));
            }
            for (;;) {
                int v = -1;
                int rc = zmq_recv (pull[i], &v, sizeof v, ZMQ_DONTWAIT);
                if (rc < 0) {
                    CHECK (zmq_errno () == EAGAIN);
                    break;
                }
                CHECK (v == expect[i]);
                expect[i]++;
                got++;
                this++;
                if (level)
                    break;
            }
            if (!this)
                empty++;
        }
    }
    CHECK (got == NMSG);
    /* Idle: every descriptor quiet. */
    struct epoll_event evs[8];
    CHECK (epoll_wait (ep, evs, 8, 100) == 0);
    /* Spurious wake-ups only from peer events and signals racing a receive: bounded. */
    if (empty > bursts + 2 * NSOCK) {
        fprintf (stderr, "  %d empty wake-ups of %d (bursts %d)\n", empty, wakeups, bursts);
        t_failures++;
    }
    close (ep);
    for (int i = 0; i < NSOCK; i++) {
        CHECK_RC (zmq_close (pull[i]));
        CHECK_RC (zmq_close (push[i]));
    }
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_epoll_edge_triggered (void)
{
    epoll_run (0);
}

static void test_epoll_level_triggered (void)
{
    epoll_run (1);
}

static void test_fd_level_option (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = new_socket (ctx, ZMQ_PULL), *push = new_socket (ctx, ZMQ_PUSH);
    bind_connect (pull, push, "inproc");
    set_int (pull, ZMQ_OXMQ_FD_LEVEL, ZMQ_POLLIN);
    int bad = 4;
    CHECK_ERR (zmq_setsockopt (pull, ZMQ_OXMQ_FD_LEVEL, &bad, sizeof bad), EINVAL);
    CHECK_ERR (zmq_setsockopt (pull, ZMQ_OXMQ_FD_LEVEL, &bad, 2), EINVAL);
    int fd = get_fd (pull);
    zmq_pollitem_t it = {NULL, fd, ZMQ_POLLIN, 0};
    char buf[8];
    if (zmq_poll (&it, 1, 0) == 1) /* the peer attaching: one look finds nothing */
        CHECK (zmq_recv (pull, buf, sizeof buf, ZMQ_DONTWAIT) == -1);
    CHECK (zmq_poll (&it, 1, 20) == 0);
    send_str (push, "a", 0);
    send_str (push, "b", 0);
    CHECK (zmq_poll (&it, 1, 5000) == 1);
    CHECK (zmq_recv (pull, buf, sizeof buf, 0) == 1);
    CHECK (zmq_poll (&it, 1, 0) == 1); /* one left: still readable */
    CHECK (zmq_recv (pull, buf, sizeof buf, 0) == 1);
    CHECK (zmq_poll (&it, 1, 0) == 0); /* nothing left */
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_ctx_term (ctx));
}

#ifdef ZMQ_BUILD_DRAFT_API
/* zmq_poller over many sockets and a pipe; fewer event slots than ready items. */
static void test_poller_many (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull[NSOCK], *push[NSOCK];
    void *poller = zmq_poller_new ();
    for (int i = 0; i < NSOCK; i++) {
        pull[i] = new_socket (ctx, ZMQ_PULL);
        push[i] = new_socket (ctx, ZMQ_PUSH);
        bind_connect (pull[i], push[i], i % 2 ? "tcp" : "inproc");
        CHECK_RC (zmq_poller_add (poller, pull[i], (void *) (intptr_t) (i + 1), ZMQ_POLLIN));
    }
    int p[2];
    CHECK_RC (pipe (p));
    CHECK_RC (zmq_poller_add_fd (poller, p[0], (void *) 999, ZMQ_POLLIN));
    CHECK (zmq_poller_size (poller) == NSOCK + 1);
    zmq_poller_event_t evs[4];
    CHECK_ERR (zmq_poller_wait_all (poller, evs, 4, 20), EAGAIN);
    /* Ten sockets and the pipe ready; collected four at a time. */
    for (int i = 0; i < 10; i++)
        send_str (push[i * 5], "x", 0);
    CHECK (write (p[1], "!", 1) == 1);
    int seen = 0, pipe_seen = 0, rounds = 0;
    while (seen < 10 || !pipe_seen) {
        if (++rounds > 200)
            break;
        int n = zmq_poller_wait_all (poller, evs, 4, 5000);
        CHECK (n >= 1 && n <= 4);
        for (int e = 0; e < n; e++) {
            CHECK (evs[e].events == ZMQ_POLLIN);
            if (evs[e].socket == NULL) {
                CHECK (evs[e].fd == p[0] && evs[e].user_data == (void *) 999);
                char c;
                CHECK (read (p[0], &c, 1) == 1);
                pipe_seen = 1;
            } else {
                int i = (int) (intptr_t) evs[e].user_data - 1;
                CHECK (evs[e].socket == pull[i] && i % 5 == 0);
                char buf[4];
                CHECK (zmq_recv (pull[i], buf, sizeof buf, ZMQ_DONTWAIT) == 1);
                seen++;
            }
        }
    }
    CHECK (seen == 10 && pipe_seen);
    CHECK_ERR (zmq_poller_wait_all (poller, evs, 4, 20), EAGAIN);
    /* Removed: no longer in the set. */
    CHECK_RC (zmq_poller_remove (poller, pull[1]));
    CHECK_ERR (zmq_poller_remove (poller, pull[1]), EINVAL);
    CHECK_RC (zmq_poller_destroy (&poller));
    close (p[0]);
    close (p[1]);
    for (int i = 0; i < NSOCK; i++) {
        CHECK_RC (zmq_close (pull[i]));
        CHECK_RC (zmq_close (push[i]));
    }
    CHECK_RC (zmq_ctx_term (ctx));
}
#endif

static void test_stats (void)
{
    void *ctx = zmq_ctx_new ();
    void *pub = new_socket (ctx, ZMQ_PUB), *sub = new_socket (ctx, ZMQ_SUB);
    set_int (pub, ZMQ_SNDHWM, 10);
    set_int (sub, ZMQ_RCVHWM, 5);
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0));
    bind_connect (pub, sub, "inproc");
    for (int i = 0; i < 100; i++)
        send_str (pub, "12345", 0);
    oxmq_socket_stats_t st;
    memset (&st, 0xff, sizeof st);
    CHECK_RC (oxmq_socket_stats (pub, &st, sizeof st));
    CHECK (st.msgs_out == 100 && st.bytes_out == 500);
    CHECK (st.dropped_hwm == 85 && st.dropped_no_route == 0 && st.peers == 1);
    oxmq_socket_peer_stats_t ps[2];
    CHECK (oxmq_socket_peer_stats (pub, ps, 2) == 1);
    CHECK (ps[0].queued_out == 15 && ps[0].queued_in == -1);
    CHECK (oxmq_socket_peer_stats (pub, NULL, 0) == 1);
    /* An older, shorter struct gets only what it asks for. */
    uint64_t first[2] = {7, 7};
    CHECK_RC (oxmq_socket_stats (pub, (oxmq_socket_stats_t *) first, sizeof (uint64_t)));
    CHECK (first[0] == 0 && first[1] == 7);

    void *router = new_socket (ctx, ZMQ_ROUTER);
    for (int i = 0; i < 3; i++) {
        send_str (router, "nobody", ZMQ_SNDMORE);
        send_str (router, "lost", 0);
    }
    CHECK_RC (oxmq_socket_stats (router, &st, sizeof st));
    CHECK (st.dropped_no_route == 3 && st.msgs_out == 3);

    CHECK_ERR (oxmq_socket_stats (pub, NULL, sizeof st), EFAULT);
    CHECK_ERR (oxmq_socket_stats (pub, &st, 0), EINVAL);
    CHECK_ERR (oxmq_socket_stats (NULL, &st, sizeof st), ENOTSOCK);
    CHECK_ERR (oxmq_socket_peer_stats (pub, NULL, 1), EFAULT);
    CHECK_ERR (oxmq_socket_peer_stats (pub, ps, -1), EINVAL);
    CHECK_RC (zmq_close (router));
    CHECK_RC (zmq_close (pub));
    CHECK_RC (zmq_close (sub));
    CHECK_ERR (oxmq_socket_stats (pub, &st, sizeof st), ENOTSOCK);
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_epoll_edge_triggered);
    RUN (test_epoll_level_triggered);
    RUN (test_fd_level_option);
#ifdef ZMQ_BUILD_DRAFT_API
    RUN (test_poller_many);
#endif
    RUN (test_stats);
    return test_main_end ();
}
