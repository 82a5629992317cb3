/*
 * A tiny test harness for the C ABI tests.
 *
 * Each TEST runs in a forked child with an alarm, so a crash or hang fails that test alone
 * (and valgrind attributes errors and leaks to it). The parent prints "ok NAME" or
 * "FAIL NAME" per test; tests/c/run.sh adds them up. Waiting is always on an event with a
 * deadline (RCVTIMEO, poll timeouts), never a sleep to let things settle.
 */
#ifndef OXMQ_TESTUTIL_H
#define OXMQ_TESTUTIL_H

#include <zmq.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int t_failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            int e_ = zmq_errno ();                                                             \
            fprintf (stderr, "  %s:%d: CHECK failed: %s (zmq_errno %d: %s)\n", __FILE__,      \
                     __LINE__, #cond, e_, zmq_strerror (e_));                                  \
            t_failures++;                                                                      \
        }                                                                                      \
    } while (0)

/* The call fails with -1 and the given errno. */
#define CHECK_ERR(call, err)                                                                   \
    do {                                                                                       \
        errno = 0;                                                                             \
        int rc_ = (int) (call);                                                                \
        int e_ = errno;                                                                        \
        if (rc_ != -1 || e_ != (err) || zmq_errno () != (err)) {                               \
            fprintf (stderr, "  %s:%d: %s: rc %d errno %d (%s), zmq_errno %d; want -1/%s\n",    \
                     __FILE__, __LINE__, #call, rc_, e_, zmq_strerror (e_), zmq_errno (),      \
                     #err);                                                                    \
            t_failures++;                                                                      \
        }                                                                                      \
    } while (0)

/* The call returns a NULL pointer and sets the given errno. */
#define CHECK_NULL_ERR(call, err)                                                              \
    do {                                                                                       \
        errno = 0;                                                                             \
        void *p_ = (void *) (call);                                                            \
        int e_ = errno;                                                                        \
        if (p_ != NULL || e_ != (err)) {                                                       \
            fprintf (stderr, "  %s:%d: %s: ptr %p errno %d (%s); want NULL/%s\n", __FILE__,     \
                     __LINE__, #call, p_, e_, zmq_strerror (e_), #err);                        \
            t_failures++;                                                                      \
        }                                                                                      \
    } while (0)

#define CHECK_RC(call) CHECK ((call) != -1)

static int t_passed, t_failed;
static const char *t_only; /* run just this test (argv[1]) */

static inline void run_test (const char *name, void (*fn) (void))
{
    if (t_only && strcmp (t_only, name) != 0)
        return;
    fflush (stdout);
    fflush (stderr);
    pid_t pid = fork ();
    if (pid == 0) {
        const char *t = getenv ("TEST_TIMEOUT");
        alarm (t ? (unsigned) atoi (t) : 30);
        t_failures = 0;
        fn ();
        fflush (stdout);
        fflush (stderr);
        exit (t_failures ? 1 : 0);
    }
    int status = 0;
    waitpid (pid, &status, 0);
    int ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
    if (!ok) {
        if (WIFSIGNALED (status))
            fprintf (stderr, "  %s: killed by signal %d%s\n", name, WTERMSIG (status),
                     WTERMSIG (status) == SIGALRM ? " (timeout)" : "");
        else if (WIFEXITED (status) && WEXITSTATUS (status) != 1)
            fprintf (stderr, "  %s: exit status %d\n", name, WEXITSTATUS (status));
    }
    printf ("%s %s\n", ok ? "ok" : "FAIL", name);
    fflush (stdout);
    if (ok)
        t_passed++;
    else
        t_failed++;
}

#define RUN(fn) run_test (#fn, fn)

static inline int test_main_end (void)
{
    printf ("# %d passed, %d failed\n", t_passed, t_failed);
    return t_failed ? 1 : 0;
}

/* --- helpers ------------------------------------------------------------------------------- */

static const char *const transports[] = {"tcp", "ipc", "inproc"};
#define N_TRANSPORTS 3

/* Binds `a` on a fresh endpoint of `transport` and connects `b` to it. */
static inline void bind_connect (void *a, void *b, const char *transport)
{
    static int seq;
    char ep[256];
    size_t len = sizeof ep;
    seq++;
    if (strcmp (transport, "tcp") == 0) {
        CHECK_RC (zmq_bind (a, "tcp://127.0.0.1:*"));
        CHECK_RC (zmq_getsockopt (a, ZMQ_LAST_ENDPOINT, ep, &len));
    } else if (strcmp (transport, "ipc") == 0) {
        snprintf (ep, sizeof ep, "ipc:///tmp/oxmq-ctest-%d-%d", (int) getpid (), seq);
        CHECK_RC (zmq_bind (a, ep));
    } else {
        snprintf (ep, sizeof ep, "inproc://ctest-%d", seq);
        CHECK_RC (zmq_bind (a, ep));
    }
    CHECK_RC (zmq_connect (b, ep));
}

static inline void set_int (void *s, int opt, int v)
{
    CHECK_RC (zmq_setsockopt (s, opt, &v, sizeof v));
}

static inline void *new_socket (void *ctx, int type)
{
    void *s = zmq_socket (ctx, type);
    CHECK (s != NULL);
    set_int (s, ZMQ_LINGER, 0);
    set_int (s, ZMQ_RCVTIMEO, 5000);
    set_int (s, ZMQ_SNDTIMEO, 5000);
    return s;
}

static inline void send_str (void *s, const char *str, int flags)
{
    int n = zmq_send (s, str, strlen (str), flags);
    if (n != (int) strlen (str)) {
        fprintf (stderr, "  send '%s' failed: %s\n", str, zmq_strerror (zmq_errno ()));
        t_failures++;
    }
}

/* Receives one frame and checks it equals `want`. */
static inline void expect_str (void *s, const char *want)
{
    char buf[512];
    int n = zmq_recv (s, buf, sizeof buf - 1, 0);
    if (n < 0) {
        fprintf (stderr, "  expected '%s', recv failed: %s\n", want, zmq_strerror (zmq_errno ()));
        t_failures++;
        return;
    }
    buf[n < (int) sizeof buf - 1 ? n : (int) sizeof buf - 1] = 0;
    if ((size_t) n != strlen (want) || memcmp (buf, want, (size_t) n) != 0) {
        fprintf (stderr, "  expected '%s', got '%.*s' (%d bytes)\n", want, n, buf, n);
        t_failures++;
    }
}

static inline int rcvmore (void *s)
{
    int more = 0;
    size_t len = sizeof more;
    CHECK_RC (zmq_getsockopt (s, ZMQ_RCVMORE, &more, &len));
    return more;
}

#endif
