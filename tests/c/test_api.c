/* Library-level functions and the zmq_msg_* family, through the C ABI. */
#include "testutil.h"

static void test_version (void)
{
    int major = -1, minor = -1, patch = -1;
    zmq_version (&major, &minor, &patch);
    CHECK (major == 4 && minor == 3 && patch >= 4);
}

static void test_has (void)
{
    CHECK (zmq_has ("ipc") == 1);
    CHECK (zmq_has ("no-such-capability") == 0);
    /* The other answers must merely be honest; test_curve checks "curve" against behaviour. */
    const char *caps[] = {"pgm", "tipc", "norm", "gssapi", "plain", "draft", "curve"};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        int h = zmq_has (caps[i]);
        CHECK (h == 0 || h == 1);
    }
}

/* zmq_has ("draft") follows the program's header: a program built without the draft API
   (the function itself, as any libzmq header without ZMQ_BUILD_DRAFT_API calls it) hears 0;
   oxmq's header with the draft API enabled says 1. */
static void test_has_draft (void)
{
    CHECK ((zmq_has) ("draft") == 0);
#ifdef OXMQ_ZMQ_H
    CHECK (zmq_has ("draft") == 1);
#endif
}

/* zmq_errno is errno now (libzmq: `return errno`), not the code of an older failure. */
static void test_errno_is_current (void)
{
    CHECK (zmq_socket (NULL, ZMQ_PAIR) == NULL);
    errno = 0;
    CHECK (zmq_errno () == 0);
    errno = EAGAIN;
    CHECK (zmq_errno () == EAGAIN);
}

/* Z85 checks the length first, as libzmq: EINVAL even with null buffers; "" is invalid. */
static void test_z85_lengths (void)
{
    CHECK_NULL_ERR (zmq_z85_encode (NULL, NULL, 1), EINVAL);
    CHECK_NULL_ERR (zmq_z85_encode (NULL, NULL, 42), EINVAL);
    uint8_t out[8];
    CHECK_NULL_ERR (zmq_z85_decode (out, ""), EINVAL);
    errno = 0;
    CHECK (zmq_z85_decode (out, "HelloWorld") == out);
    CHECK (zmq_errno () == 0);
}

static void test_strerror_errno (void)
{
    /* Every errno libzmq 4.3 names itself (src/err.cpp, outside Windows) has its text... */
    CHECK (strcmp (zmq_strerror (ETERM), "Context was terminated") == 0);
    CHECK (strcmp (zmq_strerror (EFSM), "Operation cannot be accomplished in current state") == 0);
    CHECK (strcmp (zmq_strerror (ENOCOMPATPROTO), "The protocol is not compatible with the socket type") == 0);
    CHECK (strcmp (zmq_strerror (EMTHREAD), "No thread available") == 0);
    CHECK (strcmp (zmq_strerror (EHOSTUNREACH), "Host unreachable") == 0);
    /* ... and every other errno the C library's. */
    for (int e = 0; e < 140; e++) {
        if (e == EHOSTUNREACH)
            continue;
        char want[256];
        snprintf (want, sizeof want, "%s", strerror (e));
        if (strcmp (zmq_strerror (e), want) != 0) {
            fprintf (stderr, "  zmq_strerror (%d): '%s', strerror: '%s'\n", e, zmq_strerror (e), want);
            t_failures++;
        }
    }
    CHECK (zmq_socket (NULL, ZMQ_PAIR) == NULL);
    CHECK (zmq_errno () == EFAULT && errno == EFAULT);
}

static void test_z85 (void)
{
    const uint8_t data[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    char text[11];
    CHECK (zmq_z85_encode (text, data, 8) == text);
    CHECK (strcmp (text, "HelloWorld") == 0);
    uint8_t back[8];
    CHECK (zmq_z85_decode (back, "HelloWorld") == back);
    CHECK (memcmp (back, data, 8) == 0);
    CHECK_NULL_ERR (zmq_z85_encode (text, data, 7), EINVAL);
    CHECK_NULL_ERR (zmq_z85_decode (back, "Hell"), EINVAL);
}

static void test_curve (void)
{
    char pub[41], sec[41];
    int rc = zmq_curve_keypair (pub, sec);
    if (zmq_has ("curve")) {
        CHECK (rc == 0 && strlen (pub) == 40 && strlen (sec) == 40);
        char pub2[41];
        CHECK (zmq_curve_public (pub2, sec) == 0 && strcmp (pub, pub2) == 0);
    } else {
        CHECK (rc == -1 && zmq_errno () == ENOTSUP);
        CHECK_ERR (zmq_curve_public (pub, "0000000000000000000000000000000000000000"), ENOTSUP);
    }
}

static void test_atomic_counter (void)
{
    void *c = zmq_atomic_counter_new ();
    CHECK (c != NULL);
    CHECK (zmq_atomic_counter_value (c) == 0);
    CHECK (zmq_atomic_counter_inc (c) == 0);
    CHECK (zmq_atomic_counter_inc (c) == 1);
    CHECK (zmq_atomic_counter_value (c) == 2);
    CHECK (zmq_atomic_counter_dec (c) == 1);
    CHECK (zmq_atomic_counter_dec (c) == 0);
    zmq_atomic_counter_set (c, 7);
    CHECK (zmq_atomic_counter_value (c) == 7);
    zmq_atomic_counter_destroy (&c);
    CHECK (c == NULL);
}

static void test_stopwatch_sleep (void)
{
    void *w = zmq_stopwatch_start ();
    CHECK (w != NULL);
    zmq_sleep (1);
    unsigned long mid = zmq_stopwatch_intermediate (w);
    unsigned long end = zmq_stopwatch_stop (w);
    CHECK (mid >= 900000 && mid < 5000000);
    CHECK (end >= mid);
}

static void thread_fn (void *arg)
{
    zmq_atomic_counter_inc (arg);
}

static void test_threads (void)
{
    void *c = zmq_atomic_counter_new ();
    void *t1 = zmq_threadstart (thread_fn, c);
    void *t2 = zmq_threadstart (thread_fn, c);
    CHECK (t1 && t2);
    zmq_threadclose (t1);
    zmq_threadclose (t2);
    CHECK (zmq_atomic_counter_value (c) == 2);
    zmq_atomic_counter_destroy (&c);
}

static int timer_hits[4];
static void on_timer (int id, void *arg)
{
    (void) arg;
    if (id >= 0 && id < 4)
        timer_hits[id]++;
}

static void test_timers (void)
{
    void *timers = zmq_timers_new ();
    CHECK (timers != NULL);
    CHECK (zmq_timers_timeout (timers) == -1);
    int a = zmq_timers_add (timers, 20, on_timer, NULL);
    int b = zmq_timers_add (timers, 100000, on_timer, NULL);
    CHECK (a > 0 && b > 0 && a != b && a < 4 && b < 4);
    long t = zmq_timers_timeout (timers);
    CHECK (t >= 0 && t <= 20);
    void *w = zmq_stopwatch_start ();
    while (timer_hits[a] == 0 && zmq_stopwatch_intermediate (w) < 2000000) {
        long to = zmq_timers_timeout (timers);
        zmq_poll (NULL, 0, to < 0 ? 10 : to);
        CHECK_RC (zmq_timers_execute (timers));
    }
    zmq_stopwatch_stop (w);
    CHECK (timer_hits[a] >= 1);
    CHECK (timer_hits[b] == 0);
    CHECK_RC (zmq_timers_set_interval (timers, b, 50000));
    CHECK_RC (zmq_timers_reset (timers, b));
    CHECK_RC (zmq_timers_cancel (timers, a));
    CHECK_ERR (zmq_timers_cancel (timers, a), EINVAL);
    t = zmq_timers_timeout (timers);
    CHECK (t > 1000);
    CHECK_RC (zmq_timers_destroy (&timers));
    CHECK (timers == NULL);
}

static void test_ctx_options (void)
{
    void *ctx = zmq_ctx_new ();
    CHECK (ctx != NULL);
    CHECK (zmq_ctx_get (ctx, ZMQ_IO_THREADS) == ZMQ_IO_THREADS_DFLT);
    CHECK (zmq_ctx_get (ctx, ZMQ_MAX_SOCKETS) == ZMQ_MAX_SOCKETS_DFLT);
    CHECK (zmq_ctx_get (ctx, ZMQ_MSG_T_SIZE) == (int) sizeof (zmq_msg_t));
    CHECK_RC (zmq_ctx_set (ctx, ZMQ_IO_THREADS, 2));
    CHECK (zmq_ctx_get (ctx, ZMQ_IO_THREADS) == 2);
    CHECK_RC (zmq_ctx_set (ctx, ZMQ_MAX_SOCKETS, 100));
    CHECK (zmq_ctx_get (ctx, ZMQ_MAX_SOCKETS) == 100);
    CHECK_ERR (zmq_ctx_get (ctx, 4242), EINVAL);
    CHECK_ERR (zmq_ctx_set (ctx, 4242, 1), EINVAL);
    /* Once the I/O threads run, IO_THREADS is still accepted and read back (libzmq's
       zmq_ctx_set stores it at any time; zeromq.js sets it on a context in use). */
    void *s = zmq_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_bind (s, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_ctx_set (ctx, ZMQ_IO_THREADS, 3));
    CHECK (zmq_ctx_get (ctx, ZMQ_IO_THREADS) == 3);
    CHECK_ERR (zmq_ctx_set (ctx, ZMQ_IO_THREADS, -1), EINVAL);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));

    void *old = zmq_init (1);
    CHECK (old != NULL);
    CHECK_RC (zmq_term (old));
    void *c3 = zmq_ctx_new ();
    CHECK_RC (zmq_ctx_shutdown (c3));
    CHECK_RC (zmq_ctx_destroy (c3));
}

/* --- messages ------------------------------------------------------------------------------ */

static void test_msg_basics (void)
{
    CHECK (sizeof (zmq_msg_t) == 64);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_size (&m) == 0);
    CHECK (zmq_msg_more (&m) == 0);
    CHECK (zmq_msg_get (&m, ZMQ_MORE) == 0);
    CHECK_RC (zmq_msg_close (&m));

    for (size_t size = 0; size <= 100000; size = size ? size * 10 : 1) {
        CHECK_RC (zmq_msg_init_size (&m, size));
        CHECK (zmq_msg_size (&m) == size);
        if (size) {
            memset (zmq_msg_data (&m), 'x', size);
            CHECK (((char *) zmq_msg_data (&m))[size - 1] == 'x');
        }
        zmq_msg_t c;
        CHECK_RC (zmq_msg_init (&c));
        CHECK_RC (zmq_msg_copy (&c, &m));
        CHECK (zmq_msg_size (&c) == size);
        if (size)
            CHECK (memcmp (zmq_msg_data (&c), zmq_msg_data (&m), size) == 0);
        zmq_msg_t d;
        CHECK_RC (zmq_msg_init (&d));
        CHECK_RC (zmq_msg_move (&d, &m));
        CHECK (zmq_msg_size (&d) == size);
        CHECK (zmq_msg_size (&m) == 0);
        CHECK_RC (zmq_msg_close (&m));
        CHECK_RC (zmq_msg_close (&c));
        CHECK_RC (zmq_msg_close (&d));
    }
}

static void test_msg_properties (void)
{
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_size (&m, 100));
    CHECK_ERR (zmq_msg_set (&m, ZMQ_MORE, 1), EINVAL);
    CHECK_ERR (zmq_msg_get (&m, 4242), EINVAL);
    int shared = zmq_msg_get (&m, ZMQ_SHARED);
    CHECK (shared == 0 || shared == 1);
    CHECK_NULL_ERR (zmq_msg_gets (&m, "Socket-Type"), EINVAL);
    CHECK_RC (zmq_msg_close (&m));
}

static int freed_count;
static void *freed_hint;
static void free_fn (void *data, void *hint)
{
    free (data);
    freed_count++;
    freed_hint = hint;
}

static int zc_freed;

static void zc_free_fn (void *data, void *hint)
{
    free (data);
    __atomic_store_n (&zc_freed, 1, __ATOMIC_RELEASE);
}

/* zmq_msg_init_data does not copy, whatever the size: zmq_msg_data is the caller's pointer,
   and the free function runs only after the message has left (pyzmq's MessageTracker counts
   on it), not while it waits in the queue of a peer that is not there yet. */
static void test_msg_init_data_zero_copy (void)
{
    char ep[64];
    snprintf (ep, sizeof ep, "ipc:///tmp/oxmq-zc-%d", (int) getpid ());
    void *ctx = zmq_ctx_new ();
    void *push = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_connect (push, ep));
    char *buf = malloc (5);
    memcpy (buf, "hello", 5);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_data (&m, buf, 5, zc_free_fn, NULL));
    CHECK (zmq_msg_data (&m) == buf);
    CHECK (zmq_msg_send (&m, push, 0) == 5);
    CHECK (__atomic_load_n (&zc_freed, __ATOMIC_ACQUIRE) == 0);
    void *pull = new_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_bind (pull, ep));
    expect_str (pull, "hello");
    /* Freed once written out: wait for it with a deadline. */
    for (int i = 0; i < 5000 && !__atomic_load_n (&zc_freed, __ATOMIC_ACQUIRE); i++)
        zmq_poll (NULL, 0, 1);
    CHECK (__atomic_load_n (&zc_freed, __ATOMIC_ACQUIRE) == 1);
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* zmq_msg_init_data hands a buffer over; its free function runs exactly once, whether the
   message is closed, copied or sent through a socket. */
static void test_msg_init_data (void)
{
    size_t sizes[] = {10, 1000, 100000};
    for (size_t i = 0; i < 3; i++) {
        freed_count = 0;
        char *buf = malloc (sizes[i]);
        memset (buf, 'z', sizes[i]);
        zmq_msg_t m, c;
        CHECK_RC (zmq_msg_init_data (&m, buf, sizes[i], free_fn, (void *) 0x1234));
        CHECK (zmq_msg_size (&m) == sizes[i]);
        CHECK_RC (zmq_msg_init (&c));
        CHECK_RC (zmq_msg_copy (&c, &m));
        CHECK_RC (zmq_msg_close (&m));
        CHECK (zmq_msg_size (&c) == sizes[i]);
        CHECK (((char *) zmq_msg_data (&c))[sizes[i] - 1] == 'z');
        CHECK_RC (zmq_msg_close (&c));
        CHECK (freed_count == 1);
        CHECK (freed_hint == (void *) 0x1234);
    }

    /* Through a socket pair: freed once, after the context is gone at the latest. */
    for (int t = 0; t < N_TRANSPORTS; t++) {
        freed_count = 0;
        void *ctx = zmq_ctx_new ();
        void *push = new_socket (ctx, ZMQ_PUSH), *pull = new_socket (ctx, ZMQ_PULL);
        bind_connect (pull, push, transports[t]);
        char *buf = malloc (5000);
        memset (buf, 'q', 5000);
        zmq_msg_t m;
        CHECK_RC (zmq_msg_init_data (&m, buf, 5000, free_fn, NULL));
        CHECK (zmq_msg_send (&m, push, 0) == 5000);
        CHECK_RC (zmq_msg_close (&m));
        zmq_msg_t r;
        CHECK_RC (zmq_msg_init (&r));
        CHECK (zmq_msg_recv (&r, pull, 0) == 5000);
        CHECK (((char *) zmq_msg_data (&r))[4999] == 'q');
        CHECK_RC (zmq_msg_close (&r));
        CHECK_RC (zmq_close (push));
        CHECK_RC (zmq_close (pull));
        CHECK_RC (zmq_ctx_term (ctx));
        CHECK (freed_count == 1);
    }
}

/* A constant buffer (no free function) is referenced, never freed. */
static void test_msg_init_data_const (void)
{
    static const char text[] = "constant data that outlives the message, longer than inline";
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_data (&m, (void *) text, sizeof text, NULL, NULL));
    CHECK (zmq_msg_size (&m) == sizeof text);
    CHECK (memcmp (zmq_msg_data (&m), text, sizeof text) == 0);
    CHECK_RC (zmq_msg_close (&m));
}

static void test_msg_misuse (void)
{
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_size (&m, 50));
    CHECK_RC (zmq_msg_close (&m));
    /* double close and use after close are caught */
    CHECK_ERR (zmq_msg_close (&m), EFAULT);
    zmq_msg_t d;
    CHECK_RC (zmq_msg_init (&d));
    CHECK_ERR (zmq_msg_copy (&d, &m), EFAULT);
    CHECK_ERR (zmq_msg_move (&d, &m), EFAULT);
    CHECK_RC (zmq_msg_close (&d));
}

#ifdef ZMQ_BUILD_DRAFT_API
static void test_msg_draft (void)
{
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_buffer (&m, "abc", 3));
    CHECK (zmq_msg_size (&m) == 3 && memcmp (zmq_msg_data (&m), "abc", 3) == 0);
    CHECK (zmq_msg_routing_id (&m) == 0);
    CHECK_ERR (zmq_msg_set_routing_id (&m, 0), EINVAL);
    const char *g = zmq_msg_group (&m);
    CHECK (g != NULL && g[0] == 0);
    CHECK_RC (zmq_msg_close (&m));
}
#endif

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_version);
    RUN (test_has);
    RUN (test_has_draft);
    RUN (test_errno_is_current);
    RUN (test_z85_lengths);
    RUN (test_strerror_errno);
    RUN (test_z85);
    RUN (test_curve);
    RUN (test_atomic_counter);
    RUN (test_stopwatch_sleep);
    RUN (test_threads);
    RUN (test_timers);
    RUN (test_ctx_options);
    RUN (test_msg_basics);
    RUN (test_msg_properties);
    RUN (test_msg_init_data);
    RUN (test_msg_init_data_const);
    RUN (test_msg_init_data_zero_copy);
    RUN (test_msg_misuse);
#ifdef ZMQ_BUILD_DRAFT_API
    RUN (test_msg_draft);
#endif
    return test_main_end ();
}
