/* Sockets driven only through ZMQ_FD and ZMQ_EVENTS, the way an event-loop binding drives
   them. The loop here is zeromq.js's (src/poller.h, src/socket.cc), which pyzmq's asyncio
   and gevent integrations resemble: a send or receive that cannot go at once (ZMQ_EVENTS
   says so) waits for ZMQ_FD to poll readable, while any operation waits; when it does, the
   waiting receive is retried if ZMQ_EVENTS has POLLIN, then the waiting send if it has
   POLLOUT. A send made at once is followed by that retry of a waiting receive, a receive
   made at once by that of a waiting send; nothing else looks at ZMQ_EVENTS. Application code
   (what a JavaScript promise's continuation would run) is queued as tasks and run after
   each native step, as the loop's microtasks are.

   So a socket whose ZMQ_FD fails to signal a change of ZMQ_EVENTS that its own operations
   did not report (libzmq's edge-triggered contract) hangs here: each scenario must finish
   with no wait on the descriptor longer than a few seconds. Every scenario runs over tcp,
   ipc and inproc, with the descriptor in a level-triggered poll(2) (libuv's uv_poll) and in
   an edge-triggered epoll (EPOLLET). */
#include "testutil.h"

#include <dlfcn.h>
#include <poll.h>
#include <sys/epoll.h>
#include <time.h>

#define MAXPART 4
#define PARTLEN 24

typedef struct
{
    int n;
    int len[MAXPART];
    char part[MAXPART][PARTLEN];
    uint32_t routing_id; /* SERVER/CLIENT */
} lmsg_t;

#define QCAP 2048

typedef struct loop_sock loop_sock_t;
typedef void (handler_fn) (loop_sock_t *self, const lmsg_t *m);

struct loop_sock
{
    void *s;
    int fd;
    const char *name;
    int want_read, want_write; /* an operation waits for the descriptor */
    int reading;               /* the application keeps a receive pending */
    int sending;               /* the application's send loop runs */
    lmsg_t pending;            /* what the waiting send sends */
    lmsg_t queue[QCAP];        /* the application's send queue */
    int qhead, qlen;
    handler_fn *on_msg;
    int got, sent;
    int draft; /* a draft (thread-safe) socket: messages carry routing ids */
    int peer;  /* scenario data */
    int expect;
};

/* --- the loop's task queue (a promise's continuation, a nextTick) ------------------------ */

enum { T_GOT, T_SENT };
typedef struct
{
    int kind;
    loop_sock_t *ls;
    lmsg_t m;
} task_t;

#define TCAP 8192
static task_t tasks[TCAP];
static int thead, tlen;
static long progress; /* messages moved; a wake-up without progress is counted */

static void push_task (int kind, loop_sock_t *ls, const lmsg_t *m)
{
    if (tlen == TCAP) {
        fprintf (stderr, "  task queue full\n");
        t_failures++;
        return;
    }
    task_t *t = &tasks[(thead + tlen++) % TCAP];
    t->kind = kind;
    t->ls = ls;
    if (m)
        t->m = *m;
}

/* --- the native layer: zeromq.js's Socket::Send/Receive and Poller ---------------------- */

static int events_of (loop_sock_t *ls)
{
    int ev = 0;
    size_t len = sizeof ev;
    while (zmq_getsockopt (ls->s, ZMQ_EVENTS, &ev, &len) != 0) {
        if (zmq_errno () != EINTR) {
            fprintf (stderr, "  %s: ZMQ_EVENTS: %s\n", ls->name, zmq_strerror (zmq_errno ()));
            t_failures++;
            return 0;
        }
    }
    return ev;
}

/* ZMQ_EVENTS said POLLIN: the whole message is there. */
static void recv_msg (loop_sock_t *ls)
{
    lmsg_t m;
    memset (&m, 0, sizeof m);
    for (;;) {
        zmq_msg_t part;
        zmq_msg_init (&part);
        int rc = zmq_msg_recv (&part, ls->s, ZMQ_DONTWAIT);
        if (rc < 0) {
            fprintf (stderr, "  %s: ZMQ_EVENTS said POLLIN, receive failed: %s\n", ls->name,
                     zmq_strerror (zmq_errno ()));
            t_failures++;
            zmq_msg_close (&part);
            return;
        }
        if (m.n < MAXPART) {
            int n = rc < PARTLEN ? rc : PARTLEN;
            memcpy (m.part[m.n], zmq_msg_data (&part), (size_t) n);
            m.len[m.n] = rc;
        }
#ifdef ZMQ_BUILD_DRAFT_API
        /* Only then: a library without the draft API lacks the symbol. */
        if (ls->draft)
            m.routing_id = zmq_msg_routing_id (&part);
#endif
        m.n++;
        int more = zmq_msg_more (&part);
        zmq_msg_close (&part);
        if (!more)
            break;
    }
    progress++;
    push_task (T_GOT, ls, &m);
}

/* ZMQ_EVENTS said POLLOUT: every part goes without waiting. */
static void send_msg (loop_sock_t *ls, const lmsg_t *m)
{
    for (int i = 0; i < m->n; i++) {
        zmq_msg_t part;
        zmq_msg_init_size (&part, (size_t) m->len[i]);
        memcpy (zmq_msg_data (&part), m->part[i], (size_t) m->len[i]);
#ifdef ZMQ_BUILD_DRAFT_API
        if (ls->draft && m->routing_id)
            zmq_msg_set_routing_id (&part, m->routing_id);
#endif
        int flags = ZMQ_DONTWAIT | (i + 1 < m->n ? ZMQ_SNDMORE : 0);
        if (zmq_msg_send (&part, ls->s, flags) < 0) {
            fprintf (stderr, "  %s: ZMQ_EVENTS said POLLOUT, send failed: %s\n", ls->name,
                     zmq_strerror (zmq_errno ()));
            t_failures++;
            zmq_msg_close (&part);
            return;
        }
    }
    ls->sent++;
    progress++;
    push_task (T_SENT, ls, NULL);
}

static void trigger_readable (loop_sock_t *ls)
{
    if (ls->want_read && (events_of (ls) & ZMQ_POLLIN)) {
        ls->want_read = 0;
        recv_msg (ls);
    }
}

static void trigger_writable (loop_sock_t *ls)
{
    if (ls->want_write && (events_of (ls) & ZMQ_POLLOUT)) {
        ls->want_write = 0;
        send_msg (ls, &ls->pending);
    }
}

/* socket.receive(): at once when ZMQ_EVENTS allows, then a waiting send is retried;
   otherwise wait for the descriptor. */
static void op_receive (loop_sock_t *ls)
{
    if (events_of (ls) & ZMQ_POLLIN) {
        recv_msg (ls);
        trigger_writable (ls);
    } else
        ls->want_read = 1;
}

/* socket.send(m): the same, the other way round. */
static void op_send (loop_sock_t *ls, const lmsg_t *m)
{
    if (events_of (ls) & ZMQ_POLLOUT) {
        send_msg (ls, m);
        trigger_readable (ls);
    } else {
        ls->pending = *m;
        ls->want_write = 1;
    }
}

/* --- the application layer: zeromq.js's callback API (compat.ts) ----------------------- */

static void next_send (loop_sock_t *ls)
{
    if (ls->qlen == 0) {
        ls->sending = 0;
        return;
    }
    lmsg_t m = ls->queue[ls->qhead];
    ls->qhead = (ls->qhead + 1) % QCAP;
    ls->qlen--;
    op_send (ls, &m);
}

/* sock.send(...): queued; the send loop sends one message at a time. */
static void app_send (loop_sock_t *ls, const lmsg_t *m)
{
    if (ls->qlen == QCAP) {
        fprintf (stderr, "  %s: send queue full\n", ls->name);
        t_failures++;
        return;
    }
    ls->queue[(ls->qhead + ls->qlen++) % QCAP] = *m;
    if (!ls->sending) {
        ls->sending = 1;
        next_send (ls);
    }
}

/* sock.on("message", ...): a receive is always pending. */
static void app_read (loop_sock_t *ls, handler_fn *fn)
{
    ls->on_msg = fn;
    ls->reading = 1;
    op_receive (ls);
}

static void run_tasks (void)
{
    while (tlen) {
        task_t t = tasks[thead];
        thead = (thead + 1) % TCAP;
        tlen--;
        if (t.kind == T_GOT) {
            t.ls->got++;
            if (t.ls->reading)
                op_receive (t.ls); /* the read loop asks for the next message first */
            if (t.ls->on_msg)
                t.ls->on_msg (t.ls, &t.m);
        } else
            next_send (t.ls);
    }
}

/* --- the loop ------------------------------------------------------------------------- */

static int edge_mode;    /* 0: poll(2), level-triggered; 1: epoll with EPOLLET */
static int run_loop_fds; /* the sockets' descriptors are set already (pollers') */

static long now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void dump (loop_sock_t **socks, int n)
{
    for (int i = 0; i < n; i++)
        fprintf (stderr, "    %s: got %d sent %d queued %d, waits to read %d write %d, ZMQ_EVENTS %d\n",
                 socks[i]->name, socks[i]->got, socks[i]->sent, socks[i]->qlen,
                 socks[i]->want_read, socks[i]->want_write, events_of (socks[i]));
}

typedef int (done_fn) (loop_sock_t **socks, int n);

/* Runs until `done` or until no descriptor signals for 3 s (a lost edge: fails). `tick`, if
   given, is called every `tick_ms` while waiting (a publisher's retries to a late joiner). */
static void run_loop (const char *what, loop_sock_t **socks, int n, done_fn *done,
                      void (*tick) (loop_sock_t **, int), int tick_ms)
{
    for (int i = 0; i < n && !run_loop_fds; i++) {
        size_t len = sizeof socks[i]->fd;
        CHECK_RC (zmq_getsockopt (socks[i]->s, ZMQ_FD, &socks[i]->fd, &len));
    }
    int ep = -1;
    if (edge_mode) {
        ep = epoll_create1 (0);
        for (int i = 0; i < n; i++) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data = {.u32 = (uint32_t) i}};
            CHECK_RC (epoll_ctl (ep, EPOLL_CTL_ADD, socks[i]->fd, &ev));
        }
    }
    run_tasks ();
    long last = now_ms (), idle_wakeups = 0, seen = progress;
    while (!done (socks, n)) {
        int ready[16], nready = 0, waiting = 0;
        for (int i = 0; i < n; i++)
            waiting += socks[i]->want_read || socks[i]->want_write;
        int timeout = tick ? tick_ms : 3000;
        if (!waiting && !tick) {
            fprintf (stderr, "  %s: nothing waits, yet not done\n", what);
            dump (socks, n);
            t_failures++;
            break;
        }
        if (edge_mode) {
            struct epoll_event evs[16];
            int rc = epoll_wait (ep, evs, 16, timeout);
            CHECK (rc >= 0);
            for (int e = 0; e < rc; e++)
                ready[nready++] = (int) evs[e].data.u32;
        } else {
            struct pollfd p[16];
            int map[16], k = 0;
            for (int i = 0; i < n; i++)
                if (socks[i]->want_read || socks[i]->want_write) {
                    p[k] = (struct pollfd){.fd = socks[i]->fd, .events = POLLIN};
                    map[k++] = i;
                }
            int rc = poll (p, (nfds_t) k, timeout);
            CHECK (rc >= 0);
            for (int j = 0; rc > 0 && j < k; j++)
                if (p[j].revents)
                    ready[nready++] = map[j];
        }
        for (int r = 0; r < nready; r++) {
            loop_sock_t *ls = socks[ready[r]];
            /* uv_poll runs the callback only while an operation waits. */
            if (!ls->want_read && !ls->want_write)
                continue;
            /* Each completion resolves its promise in a callback scope whose close runs the
               microtasks: the application sees the message before the send is retried. */
            trigger_readable (ls);
            run_tasks ();
            trigger_writable (ls);
            run_tasks ();
        }
        if (tick && !done (socks, n)) {
            tick (socks, n);
            run_tasks ();
        }
        if (progress != seen) {
            seen = progress;
            last = now_ms ();
            idle_wakeups = 0;
        } else if (nready) {
            /* A level-triggered descriptor left readable with nothing to do would spin. */
            if (++idle_wakeups > 100000) {
                fprintf (stderr, "  %s: %ld wake-ups without progress (a descriptor that stays readable)\n",
                         what, idle_wakeups);
                dump (socks, n);
                t_failures++;
                break;
            }
        }
        if (now_ms () - last > 3000) {
            fprintf (stderr, "  %s: no progress for 3 s (%s): an edge was lost\n", what,
                     edge_mode ? "epoll EPOLLET" : "poll");
            dump (socks, n);
            t_failures++;
            break;
        }
    }
    if (ep >= 0)
        close (ep);
    /* Nothing left over for the next scenario. */
    for (int i = 0; i < n; i++)
        socks[i]->want_read = socks[i]->want_write = socks[i]->reading = socks[i]->sending = 0;
    tlen = 0;
}

/* --- scenarios ------------------------------------------------------------------------- */

static lmsg_t msg1 (const char *a)
{
    lmsg_t m;
    memset (&m, 0, sizeof m);
    m.n = 1;
    m.len[0] = (int) strlen (a);
    memcpy (m.part[0], a, (size_t) m.len[0]);
    return m;
}

static lmsg_t msg_num (int i)
{
    char b[PARTLEN];
    snprintf (b, sizeof b, "%d", i);
    return msg1 (b);
}

static int num_of (const lmsg_t *m, int part)
{
    char b[PARTLEN + 1];
    int n = m->len[part] < PARTLEN ? m->len[part] : PARTLEN;
    memcpy (b, m->part[part], (size_t) n);
    b[n] = 0;
    return atoi (b);
}

static void init_ls (loop_sock_t *ls, void *s, const char *name)
{
    memset (ls, 0, sizeof *ls);
    ls->s = s;
    ls->name = name;
}

#define N_BURST 200

static int first_done (loop_sock_t **socks, int n)
{
    (void) n;
    return socks[0]->expect >= N_BURST;
}

static int first_two_done (loop_sock_t **socks, int n)
{
    (void) n;
    return socks[0]->expect >= N_BURST && socks[1]->expect >= N_BURST;
}

/* Replies in order, the last part a number: counts them. */
static void count_in_order (loop_sock_t *self, const lmsg_t *m)
{
    int v = num_of (m, m->n - 1);
    if (v != self->expect) {
        fprintf (stderr, "  %s: got %d, expected %d\n", self->name, v, self->expect);
        t_failures++;
    }
    self->expect++;
}

static void echo (loop_sock_t *self, const lmsg_t *m)
{
    app_send (self, m);
}

/* REQ queues every request at once; each goes when the previous reply has come back
   (zeromq.js's compat "should support a burst"). */
static void req_burst (void *req, void *rep, const char *what)
{
    loop_sock_t a, b;
    init_ls (&a, req, "REQ");
    init_ls (&b, rep, "REP");
    app_read (&b, echo);
    app_read (&a, count_in_order);
    for (int i = 0; i < N_BURST; i++) {
        lmsg_t m = msg_num (i);
        app_send (&a, &m);
    }
    loop_sock_t *socks[] = {&a, &b};
    run_loop (what, socks, 2, first_done, NULL, 0);
}

/* A ROUTER echoes to whichever peer asked (envelope kept): two DEALERs or REQs burst. */
static void router_burst (void *router, void *c1, void *c2, const char *what, int c_is_req)
{
    loop_sock_t r, a, b;
    init_ls (&r, router, "ROUTER");
    init_ls (&a, c1, c_is_req ? "REQ 1" : "DEALER 1");
    init_ls (&b, c2, c_is_req ? "REQ 2" : "DEALER 2");
    app_read (&r, echo);
    app_read (&a, count_in_order);
    app_read (&b, count_in_order);
    for (int i = 0; i < N_BURST; i++) {
        lmsg_t m = msg_num (i);
        app_send (&a, &m);
        app_send (&b, &m);
    }
    loop_sock_t *socks[] = {&a, &b, &r};
    run_loop (what, socks, 3, first_two_done, NULL, 0);
}

/* A DEALER talks to a REP: requests carry the empty delimiter themselves. */
static void dealer_rep (void *dealer, void *rep, const char *what)
{
    loop_sock_t a, b;
    init_ls (&a, dealer, "DEALER");
    init_ls (&b, rep, "REP");
    app_read (&b, echo);
    app_read (&a, count_in_order);
    for (int i = 0; i < N_BURST; i++) {
        lmsg_t m = msg_num (i);
        m.n = 2;
        m.len[1] = m.len[0];
        memcpy (m.part[1], m.part[0], PARTLEN);
        m.len[0] = 0;
        app_send (&a, &m);
    }
    loop_sock_t *socks[] = {&a, &b};
    run_loop (what, socks, 2, first_done, NULL, 0);
}

/* PUSH to PULL with HWMs of 5: the PUSH waits for room over and over. */
static void push_pull (void *push, void *pull, const char *what)
{
    loop_sock_t a, b;
    init_ls (&b, pull, "PULL");
    init_ls (&a, push, "PUSH");
    app_read (&b, count_in_order);
    for (int i = 0; i < 5 * N_BURST; i++) {
        lmsg_t m = msg_num (i);
        app_send (&a, &m);
    }
    b.expect = 0;
    loop_sock_t *socks[] = {&b, &a};
    run_loop (what, socks, 2, first_done, NULL, 0);
}

/* PAIR ping-pong: each side answers with the next number, up to N_BURST. */
static void pair_ball (loop_sock_t *self, const lmsg_t *m)
{
    int v = num_of (m, 0);
    if (v != self->expect) {
        fprintf (stderr, "  %s: got %d, expected %d\n", self->name, v, self->expect);
        t_failures++;
    }
    self->expect = v + 2;
    lmsg_t r = msg_num (v + 1);
    app_send (self, &r);
}

static int pair_done (loop_sock_t **socks, int n)
{
    (void) n;
    return socks[0]->got + socks[1]->got >= N_BURST;
}

static void pair_pingpong (void *p1, void *p2, const char *what)
{
    loop_sock_t a, b;
    init_ls (&a, p1, "PAIR 1");
    init_ls (&b, p2, "PAIR 2");
    a.expect = 1;
    b.expect = 0;
    app_read (&a, pair_ball);
    app_read (&b, pair_ball);
    lmsg_t m = msg_num (0);
    app_send (&a, &m);
    loop_sock_t *socks[] = {&a, &b};
    run_loop (what, socks, 2, pair_done, NULL, 0);
}

/* XPUB learns of the subscription from its socket, then publishes N_BURST messages. */
static void publish_on_subscribe (loop_sock_t *self, const lmsg_t *m)
{
    if (m->len[0] >= 1 && m->part[0][0] == 1) {
        for (int i = 0; i < N_BURST; i++) {
            lmsg_t p = msg_num (i);
            app_send (self, &p);
        }
    }
}

static void xpub_sub (void *xpub, void *sub, int sub_is_x, const char *what)
{
    loop_sock_t a, b;
    init_ls (&a, sub, sub_is_x ? "XSUB" : "SUB");
    init_ls (&b, xpub, "XPUB");
    app_read (&b, publish_on_subscribe);
    app_read (&a, count_in_order);
    if (sub_is_x) {
        lmsg_t s = msg1 ("\001");
        app_send (&a, &s); /* the subscription, sent through the loop */
    } else
        CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0));
    loop_sock_t *socks[] = {&a, &b};
    run_loop (what, socks, 2, first_done, NULL, 0);
}

/* PUB cannot know when a SUB has joined: it publishes a "hello" every 10 ms of quiet until
   the SUB has one, then N_BURST numbers. */
static int pub_numbering = -1;

static void sub_count (loop_sock_t *self, const lmsg_t *m)
{
    if (m->len[0] == 5 && memcmp (m->part[0], "hello", 5) == 0) {
        if (pub_numbering < 0) {
            pub_numbering = 0;
            self->peer = 1; /* tells the tick to publish */
        }
        return;
    }
    count_in_order (self, m);
}

static void pub_tick (loop_sock_t **socks, int n)
{
    (void) n;
    loop_sock_t *sub = socks[0], *pub = socks[1];
    if (sub->peer == 1) {
        sub->peer = 2;
        for (int i = 0; i < N_BURST; i++) {
            lmsg_t m = msg_num (i);
            app_send (pub, &m);
        }
    } else if (sub->peer == 0 && !pub->sending) {
        lmsg_t m = msg1 ("hello");
        app_send (pub, &m);
    }
}

static void pub_sub (void *pub, void *sub, const char *what)
{
    loop_sock_t a, b;
    init_ls (&a, sub, "SUB");
    init_ls (&b, pub, "PUB");
    pub_numbering = -1;
    CHECK_RC (zmq_setsockopt (sub, ZMQ_SUBSCRIBE, "", 0));
    app_read (&a, sub_count);
    loop_sock_t *socks[] = {&a, &b};
    run_loop (what, socks, 2, first_done, pub_tick, 10);
}

#ifdef ZMQ_BUILD_DRAFT_API
/* CLIENT/SERVER: thread-safe sockets have no ZMQ_FD; zeromq.js polls zmq_poller_fd of a
   poller holding the socket instead and asks the socket's ZMQ_EVENTS as for the others. */
static void server_echo (loop_sock_t *self, const lmsg_t *m)
{
    CHECK (m->routing_id != 0);
    app_send (self, m);
}
#endif

/* --- the scenarios over every transport, both loop modes --------------------------------- */

static void each (int ta, int tb, void (*fn) (void *, void *, const char *))
{
    for (int mode = 0; mode < 2; mode++)
        for (int t = 0; t < N_TRANSPORTS; t++) {
            edge_mode = mode;
            char what[96];
            snprintf (what, sizeof what, "%s, %s", transports[t], mode ? "epoll EPOLLET" : "poll");
            void *ctx = zmq_ctx_new ();
            void *a = new_socket (ctx, ta), *b = new_socket (ctx, tb);
            int before = t_failures;
            bind_connect (b, a, transports[t]);
            fn (a, b, what);
            if (t_failures != before)
                fprintf (stderr, "  ... over %s\n", what);
            CHECK_RC (zmq_close (a));
            CHECK_RC (zmq_close (b));
            CHECK_RC (zmq_ctx_term (ctx));
        }
}

static void test_req_rep_burst (void)
{
    each (ZMQ_REQ, ZMQ_REP, req_burst);
}

static void dealer_rep_fn (void *a, void *b, const char *what)
{
    dealer_rep (a, b, what);
}
static void test_dealer_rep (void)
{
    each (ZMQ_DEALER, ZMQ_REP, dealer_rep_fn);
}

static void test_push_pull (void)
{
    /* HWMs must be set before the connection: these sockets are made per run. */
    for (int mode = 0; mode < 2; mode++)
        for (int t = 0; t < N_TRANSPORTS; t++) {
            edge_mode = mode;
            char what[96];
            snprintf (what, sizeof what, "%s, %s", transports[t], mode ? "epoll EPOLLET" : "poll");
            void *ctx = zmq_ctx_new ();
            void *push = new_socket (ctx, ZMQ_PUSH), *pull = new_socket (ctx, ZMQ_PULL);
            set_int (push, ZMQ_SNDHWM, 5);
            set_int (pull, ZMQ_RCVHWM, 5);
            int before = t_failures;
            bind_connect (pull, push, transports[t]);
            push_pull (push, pull, what);
            if (t_failures != before)
                fprintf (stderr, "  ... over %s\n", what);
            CHECK_RC (zmq_close (push));
            CHECK_RC (zmq_close (pull));
            CHECK_RC (zmq_ctx_term (ctx));
        }
}

static void test_pair (void)
{
    each (ZMQ_PAIR, ZMQ_PAIR, pair_pingpong);
}

static void xpub_xsub_fn (void *xsub, void *xpub, const char *what)
{
    xpub_sub (xpub, xsub, 1, what);
}
static void xpub_sub_fn (void *sub, void *xpub, const char *what)
{
    xpub_sub (xpub, sub, 0, what);
}
static void test_xpub_xsub (void)
{
    each (ZMQ_XSUB, ZMQ_XPUB, xpub_xsub_fn);
}
static void test_xpub_sub (void)
{
    each (ZMQ_SUB, ZMQ_XPUB, xpub_sub_fn);
}

static void pub_sub_fn (void *sub, void *pub, const char *what)
{
    pub_sub (pub, sub, what);
}
static void test_pub_sub (void)
{
    each (ZMQ_SUB, ZMQ_PUB, pub_sub_fn);
}

/* Two clients of one ROUTER. */
static void routers (int client_type)
{
    for (int mode = 0; mode < 2; mode++)
        for (int t = 0; t < N_TRANSPORTS; t++) {
            edge_mode = mode;
            char what[96];
            snprintf (what, sizeof what, "%s, %s", transports[t], mode ? "epoll EPOLLET" : "poll");
            void *ctx = zmq_ctx_new ();
            void *router = new_socket (ctx, ZMQ_ROUTER);
            void *c1 = new_socket (ctx, client_type), *c2 = new_socket (ctx, client_type);
            char ep[256];
            size_t len = sizeof ep;
            int before = t_failures;
            bind_connect (router, c1, transports[t]);
            CHECK_RC (zmq_getsockopt (router, ZMQ_LAST_ENDPOINT, ep, &len));
            CHECK_RC (zmq_connect (c2, ep));
            router_burst (router, c1, c2, what, client_type == ZMQ_REQ);
            if (t_failures != before)
                fprintf (stderr, "  ... over %s\n", what);
            CHECK_RC (zmq_close (router));
            CHECK_RC (zmq_close (c1));
            CHECK_RC (zmq_close (c2));
            CHECK_RC (zmq_ctx_term (ctx));
        }
}

static void test_dealer_router (void)
{
    routers (ZMQ_DEALER);
}

static void test_req_router (void)
{
    routers (ZMQ_REQ);
}

/* The connecting socket asks for a message before it connects (zeromq.js's callback API
   does so as it creates a socket), so ZMQ_EVENTS was read with no pipe at all: the pipe the
   connect attaches must signal the descriptor when its first message comes. An inproc pipe
   is written (its routing id) before its socket owns it; libzmq 4.3 loses that edge, so an
   inproc SUB or PULL made this way never hears of its messages there (Debian's libzmq fails
   the inproc cases of this test). */
static void test_read_before_connect (void)
{
    for (int mode = 0; mode < 2; mode++)
        for (int t = 0; t < N_TRANSPORTS; t++)
            for (int kind = 0; kind < 2; kind++) {
                edge_mode = mode;
                char what[96];
                snprintf (what, sizeof what, "%s, %s, %s", kind ? "XPUB/SUB" : "PUSH/PULL",
                          transports[t], mode ? "epoll EPOLLET" : "poll");
                void *ctx = zmq_ctx_new ();
                void *bound = new_socket (ctx, kind ? ZMQ_XPUB : ZMQ_PUSH);
                void *conn = new_socket (ctx, kind ? ZMQ_SUB : ZMQ_PULL);
                char ep[256];
                size_t len = sizeof ep;
                int before = t_failures;
                if (strcmp (transports[t], "tcp") == 0)
                    CHECK_RC (zmq_bind (bound, "tcp://127.0.0.1:*"));
                else if (strcmp (transports[t], "ipc") == 0) {
                    snprintf (ep, sizeof ep, "ipc:///tmp/oxmq-ctest-rbc-%d-%d-%d", (int) getpid (), mode, kind);
                    CHECK_RC (zmq_bind (bound, ep));
                } else {
                    snprintf (ep, sizeof ep, "inproc://rbc-%d-%d", mode, kind);
                    CHECK_RC (zmq_bind (bound, ep));
                }
                CHECK_RC (zmq_getsockopt (bound, ZMQ_LAST_ENDPOINT, ep, &len));
                loop_sock_t a, b;
                init_ls (&a, conn, kind ? "SUB" : "PULL");
                init_ls (&b, bound, kind ? "XPUB" : "PUSH");
                size_t fl = sizeof a.fd;
                CHECK_RC (zmq_getsockopt (conn, ZMQ_FD, &a.fd, &fl));
                app_read (&a, count_in_order); /* no pipe yet: waits on the descriptor */
                if (kind) {
                    CHECK_RC (zmq_setsockopt (conn, ZMQ_SUBSCRIBE, "", 0));
                    app_read (&b, publish_on_subscribe);
                } else
                    for (int i = 0; i < N_BURST; i++) {
                        lmsg_t m = msg_num (i);
                        app_send (&b, &m);
                    }
                CHECK_RC (zmq_connect (conn, ep));
                loop_sock_t *socks[] = {&a, &b};
                run_loop (what, socks, 2, first_done, NULL, 0);
                if (t_failures != before)
                    fprintf (stderr, "  ... over %s\n", what);
                CHECK_RC (zmq_close (bound));
                CHECK_RC (zmq_close (conn));
                CHECK_RC (zmq_ctx_term (ctx));
            }
}

#ifdef ZMQ_BUILD_DRAFT_API
/* The descriptor zeromq.js polls for a thread-safe socket: a poller's (zmq_poller_fd). */
static void client_server_run (void *client, void *server, const char *what)
{
    loop_sock_t a, b;
    init_ls (&a, client, "CLIENT");
    init_ls (&b, server, "SERVER");
    a.draft = b.draft = 1;
    void *pa = zmq_poller_new (), *pb = zmq_poller_new ();
    CHECK_RC (zmq_poller_add (pa, client, NULL, ZMQ_POLLIN | ZMQ_POLLOUT));
    CHECK_RC (zmq_poller_add (pb, server, NULL, ZMQ_POLLIN | ZMQ_POLLOUT));
    app_read (&b, server_echo);
    app_read (&a, count_in_order);
    for (int i = 0; i < N_BURST; i++) {
        lmsg_t m = msg_num (i);
        app_send (&a, &m);
    }
    loop_sock_t *socks[] = {&a, &b};
    /* run_loop asks ZMQ_FD; give it the pollers' descriptors instead. */
    int fa = -1, fb = -1;
    CHECK_RC (zmq_poller_fd (pa, &fa));
    CHECK_RC (zmq_poller_fd (pb, &fb));
    a.fd = fa;
    b.fd = fb;
    run_loop_fds = 1;
    run_loop (what, socks, 2, first_done, NULL, 0);
    run_loop_fds = 0;
    CHECK_RC (zmq_poller_destroy (&pa));
    CHECK_RC (zmq_poller_destroy (&pb));
}

static void test_client_server (void)
{
    if (!dlsym (RTLD_DEFAULT, "zmq_poller_fd")) {
        printf ("# test_client_server: a library without the draft API (no zmq_poller_fd)\n");
        return;
    }
    each (ZMQ_CLIENT, ZMQ_SERVER, client_server_run);
}
#endif

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_req_rep_burst);
    RUN (test_req_router);
    RUN (test_dealer_rep);
    RUN (test_dealer_router);
    RUN (test_push_pull);
    RUN (test_pair);
    RUN (test_xpub_xsub);
    RUN (test_xpub_sub);
    RUN (test_pub_sub);
    RUN (test_read_before_connect);
#ifdef ZMQ_BUILD_DRAFT_API
    RUN (test_client_server);
#endif
    return test_main_end ();
}
