/* Shared bits of the scale programs (fanout_*, spread_*, router_srv/dealer_cli, fanin_*, churn_*,
   slow_*) and the soak peer: checked ZeroMQ calls, what a process costs (CPU, RSS,
   descriptors, threads, read from getrusage and /proc/self), and the line protocol the
   driver (perf/harness/scale.py, perf/soak/soak.py) reads from stdout:

     endpoint <zmq endpoint>     the bound socket's ZMQ_LAST_ENDPOINT (a binder prints it first)
     sync <zmq endpoint>         a second bound socket for coordination, if any
     result key=value ...        the measurement, one line, last

   Every program bounds its waits (receive timeouts, deadlines) and exits non-zero on any
   error or mismatch, so the driver never has to guess. */
#ifndef OXMQ_SCALE_UTIL_H
#define OXMQ_SCALE_UTIL_H

#include <zmq.h>
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <unistd.h>
#include "perf_util.h"

/* Messages of the scale programs carry a sequence number in their first 8 bytes; this one
   ends a stream. */
#define SEQ_END UINT64_MAX

static inline void zcheck (int rc, const char *what)
{
    if (rc < 0)
        die (what, zmq_strerror (zmq_errno ()));
}

static inline void *zsock (void *ctx, int type)
{
    void *s = zmq_socket (ctx, type);
    if (!s)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    return s;
}

static inline void zsetint (void *s, int opt, int v, const char *what)
{
    zcheck (zmq_setsockopt (s, opt, &v, sizeof v), what);
}

/* A context for many sockets: libzmq refuses more than ZMQ_MAX_SOCKETS (1023 by default). */
static inline void *zctx (int sockets)
{
    void *ctx = zmq_ctx_new ();
    if (!ctx)
        die ("zmq_ctx_new", zmq_strerror (zmq_errno ()));
    if (sockets + 16 > 1023)
        zcheck (zmq_ctx_set (ctx, ZMQ_MAX_SOCKETS, sockets + 16), "ZMQ_MAX_SOCKETS");
    return ctx;
}

/* Binds and prints "<label> <last endpoint>" (tcp://127.0.0.1:* gets a free port). The
   listen backlog is 4096, as an operator expecting thousands of peers would set it: with
   the default 100 a connect storm waits for SYN retransmits (1 s) in either library. */
static inline void zbind_print (void *s, const char *ep, const char *label)
{
    int backlog = 4096;
    zmq_setsockopt (s, ZMQ_BACKLOG, &backlog, sizeof backlog);
    if (zmq_bind (s, ep) != 0) {
        fprintf (stderr, "bind %s: ", ep);
        die ("zmq_bind", zmq_strerror (zmq_errno ()));
    }
    char buf[256];
    size_t len = sizeof buf;
    zcheck (zmq_getsockopt (s, ZMQ_LAST_ENDPOINT, buf, &len), "ZMQ_LAST_ENDPOINT");
    printf ("%s %s\n", label, buf);
    fflush (stdout);
}

/* At the start of every program: die with the parent (a driver killed by its timeout
   leaves no process behind), and many connections need many descriptors: raise the soft
   limit to the hard one. */
static inline void proc_init (void)
{
    prctl (PR_SET_PDEATHSIG, SIGKILL);
    signal (SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit (RLIMIT_NOFILE, &rl);
    }
}

/* User + system CPU of the whole process (every thread), µs. */
static inline long long cpu_us (void)
{
    struct rusage ru;
    getrusage (RUSAGE_SELF, &ru);
    return (long long) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL + ru.ru_utime.tv_usec
           + ru.ru_stime.tv_usec;
}

static inline long proc_status (const char *field); /* below */

/* Peak resident set of the process, KiB: VmHWM, not getrusage's ru_maxrss, which on Linux
   keeps the peak of the image before exec (a Python parent's, for instance). */
static inline long maxrss_kb (void)
{
    return proc_status ("VmHWM");
}

/* A peer's routing id: 4 bytes, 0x80 then the index (24 bits, big-endian); ids starting with
   a zero byte are reserved for generated ones (oxmq refuses them as ZMQ_ROUTING_ID). */
static inline void put_peer_id (unsigned char *p, uint32_t k)
{
    p[0] = 0x80;
    p[1] = (unsigned char) (k >> 16);
    p[2] = (unsigned char) (k >> 8);
    p[3] = (unsigned char) k;
}

static inline int64_t get_peer_id (const unsigned char *p, size_t len)
{
    if (len != 4 || p[0] != 0x80)
        return -1;
    return ((int64_t) p[1] << 16) | ((int64_t) p[2] << 8) | p[3];
}

/* A "Name: value" field of /proc/self/status (VmRSS in KiB, Threads), -1 if absent. */
static inline long proc_status (const char *field)
{
    FILE *f = fopen ("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen (field);
    long v = -1;
    while (fgets (line, sizeof line, f))
        if (strncmp (line, field, n) == 0 && line[n] == ':') {
            v = strtol (line + n + 1, NULL, 10);
            break;
        }
    fclose (f);
    return v;
}

static inline long rss_kb (void)
{
    return proc_status ("VmRSS");
}

static inline long threads (void)
{
    return proc_status ("Threads");
}

/* Open descriptors (entries of /proc/self/fd, less the one opendir holds). */
static inline long open_fds (void)
{
    DIR *d = opendir ("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir (d)))
        if (e->d_name[0] != '.')
            n++;
    closedir (d);
    return n - 1;
}

static inline void put_u64 (void *p, uint64_t v)
{
    memcpy (p, &v, sizeof v);
}

static inline uint64_t get_u64 (const void *p)
{
    uint64_t v;
    memcpy (&v, p, sizeof v);
    return v;
}

static inline void put_u32 (void *p, uint32_t v)
{
    memcpy (p, &v, sizeof v);
}

static inline uint32_t get_u32 (const void *p)
{
    uint32_t v;
    memcpy (&v, p, sizeof v);
    return v;
}

/* The result line: "result " + the formatted fields, flushed at once. */
static inline void result (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    fputs ("result ", stdout);
    vprintf (fmt, ap);
    fputc ('\n', stdout);
    fflush (stdout);
    va_end (ap);
}

/* The receiving side of the fan-out and spread scenarios: reads the n sockets with zmq_poll
   until each has delivered the end marker (SEQ_END), calling on_seq (state, socket index,
   sequence number) for every other message and on_end (state, socket index, SEQ_END) at each
   socket's end marker. A message too short for a sequence number counts in *errors. Dies after
   120 s without a message. Returns cpu_us () at the first message, or -1 if none came. */
typedef void (*seq_fn) (void *state, long socket, uint64_t seq);

static inline long long read_until_end (void **socks, long n, const char *who, seq_fn on_seq, seq_fn on_end,
                                        void *state, long *errors)
{
    zmq_pollitem_t *items = calloc ((size_t) n, sizeof *items);
    if (!items)
        die (who, "out of memory");
    for (long i = 0; i < n; i++) {
        items[i].socket = socks[i];
        items[i].events = ZMQ_POLLIN;
    }
    long open = n;
    long long cpu0 = -1;
    double last_progress = now_us ();
    zmq_msg_t msg;
    zmq_msg_init (&msg);
    while (open > 0) {
        int rc = zmq_poll (items, (int) n, 1000);
        zcheck (rc, "zmq_poll");
        if (rc == 0) {
            if (now_us () - last_progress > 120e6)
                die (who, "no message for 120 s");
            continue;
        }
        last_progress = now_us ();
        for (long i = 0; i < n; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            while (zmq_msg_recv (&msg, socks[i], ZMQ_DONTWAIT) >= 0) {
                if (cpu0 < 0)
                    cpu0 = cpu_us ();
                if (zmq_msg_size (&msg) < 8) {
                    (*errors)++;
                    continue;
                }
                uint64_t seq = get_u64 (zmq_msg_data (&msg));
                if (seq == SEQ_END) {
                    on_end (state, i, seq);
                    items[i].events = 0; /* read no further: its stream is over */
                    open--;
                    break;
                }
                on_seq (state, i, seq);
            }
        }
    }
    zmq_msg_close (&msg);
    free (items);
    return cpu0;
}

/* The one-to-many scenarios' end (fanout_*, spread_*): each receiving process reports its
   error count on the sender's sync socket ("done") ... */
static inline void send_done (void *ctx, const char *sync_ep, long errors)
{
    void *sync = zsock (ctx, ZMQ_PUSH);
    zcheck (zmq_connect (sync, sync_ep), "zmq_connect sync");
    char done[32];
    int len = snprintf (done, sizeof done, "%ld", errors);
    zcheck (zmq_send (sync, done, (size_t) len, 0), "zmq_send done");
    zmq_close (sync); /* linger: the done is delivered before the context ends */
}

/* ... and the sender waits for all <procs> of them (up to 10 minutes), summing their errors. */
static inline long wait_done (void *sync, long procs, const char *who)
{
    char buf[64];
    zsetint (sync, ZMQ_RCVTIMEO, 600000, "ZMQ_RCVTIMEO");
    long errors = 0;
    for (long d = 0; d < procs; d++) {
        int n = zmq_recv (sync, buf, sizeof buf - 1, 0);
        if (n < 0)
            die (who, zmq_strerror (zmq_errno ()));
        buf[n < (int) sizeof buf - 1 ? n : (int) sizeof buf - 1] = 0;
        errors += strtol (buf, NULL, 10);
    }
    return errors;
}

#endif
