/* zmq_socket_monitor and zmq_socket_monitor_versioned: libzmq's event sequences and formats. */

#include "testutil.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>

/* Reads one version-1 event; returns its number (-1 on timeout). */
static int read_event (void *mon, uint32_t *value, char *ep, size_t eplen)
{
    zmq_msg_t m;
    zmq_msg_init (&m);
    if (zmq_msg_recv (&m, mon, 0) == -1) {
        zmq_msg_close (&m);
        return -1;
    }
    CHECK (zmq_msg_size (&m) == 6);
    CHECK (zmq_msg_more (&m));
    uint16_t ev = 0;
    uint32_t v = 0;
    memcpy (&ev, zmq_msg_data (&m), 2);
    memcpy (&v, (char *) zmq_msg_data (&m) + 2, 4);
    CHECK (zmq_msg_recv (&m, mon, 0) != -1);
    CHECK (!zmq_msg_more (&m));
    size_t n = zmq_msg_size (&m) < eplen - 1 ? zmq_msg_size (&m) : eplen - 1;
    memcpy (ep, zmq_msg_data (&m), n);
    ep[n] = 0;
    zmq_msg_close (&m);
    if (value)
        *value = v;
    return ev;
}

/* Expects the next events to be exactly `want` (0-terminated), each naming `ep` if given. */
static void expect_events (void *mon, const int *want, const char *ep)
{
    for (; *want; want++) {
        char got_ep[256];
        int ev = read_event (mon, NULL, got_ep, sizeof got_ep);
        if (ev != *want) {
            fprintf (stderr, "  expected event 0x%x, got 0x%x (%s)\n", *want, ev, got_ep);
            t_failures++;
            return;
        }
        if (ep && *want != ZMQ_EVENT_MONITOR_STOPPED && strcmp (ep, got_ep) != 0) {
            fprintf (stderr, "  event 0x%x: endpoint '%s', expected '%s'\n", ev, got_ep, ep);
            t_failures++;
        }
    }
}

static void *watch (void *ctx, void *s, const char *name, int events)
{
    CHECK_RC (zmq_socket_monitor (s, name, events));
    void *mon = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_connect (mon, name));
    return mon;
}

static void test_tcp_sequences (void)
{
    void *ctx = zmq_ctx_new ();
    void *rep = new_socket (ctx, ZMQ_REP);
    void *req = new_socket (ctx, ZMQ_REQ);
    void *mrep = watch (ctx, rep, "inproc://mon-rep", ZMQ_EVENT_ALL);
    void *mreq = watch (ctx, req, "inproc://mon-req", ZMQ_EVENT_ALL);
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_bind (rep, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_getsockopt (rep, ZMQ_LAST_ENDPOINT, ep, &len));
    CHECK_RC (zmq_connect (req, ep));
    send_str (req, "ping", 0);
    expect_str (rep, "ping");
    send_str (rep, "pong", 0);
    expect_str (req, "pong");

    const int bind_side[] = {ZMQ_EVENT_LISTENING, ZMQ_EVENT_ACCEPTED,
                             ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 0};
    expect_events (mrep, bind_side, ep);
    const int connect_side[] = {ZMQ_EVENT_CONNECT_DELAYED, ZMQ_EVENT_CONNECTED,
                                ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 0};
    expect_events (mreq, connect_side, ep);

    /* The connecting socket closes: the bound one sees DISCONNECTED; the closed one's monitor
       ends with MONITOR_STOPPED. */
    CHECK_RC (zmq_close (req));
    const int stopped[] = {ZMQ_EVENT_MONITOR_STOPPED, 0};
    expect_events (mreq, stopped, NULL);
    const int gone[] = {ZMQ_EVENT_DISCONNECTED, 0};
    expect_events (mrep, gone, ep);
    CHECK_RC (zmq_close (rep));
    const int closed[] = {ZMQ_EVENT_CLOSED, ZMQ_EVENT_MONITOR_STOPPED, 0};
    expect_events (mrep, closed, ep);
    CHECK_RC (zmq_close (mrep));
    CHECK_RC (zmq_close (mreq));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* A raw TCP client announcing PLAIN to a NULL server: HANDSHAKE_FAILED_PROTOCOL with
   ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH, then DISCONNECTED. */
static void test_protocol_error (void)
{
    void *ctx = zmq_ctx_new ();
    void *rep = new_socket (ctx, ZMQ_REP);
    void *mon = watch (ctx, rep, "inproc://mon-proto", ZMQ_EVENT_ALL);
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_bind (rep, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_getsockopt (rep, ZMQ_LAST_ENDPOINT, ep, &len));
    int port = atoi (strrchr (ep, ':') + 1);

    int fd = socket (AF_INET, SOCK_STREAM, 0);
    CHECK (fd >= 0);
    struct sockaddr_in sa;
    memset (&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons ((uint16_t) port);
    sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    CHECK (connect (fd, (struct sockaddr *) &sa, sizeof sa) == 0);
    unsigned char g[64] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 3, 1, 'P', 'L', 'A', 'I', 'N'};
    CHECK (write (fd, g, sizeof g) == (ssize_t) sizeof g);

    uint32_t value = 0;
    char got[256];
    CHECK (read_event (mon, NULL, got, sizeof got) == ZMQ_EVENT_LISTENING);
    CHECK (read_event (mon, NULL, got, sizeof got) == ZMQ_EVENT_ACCEPTED);
    CHECK (read_event (mon, &value, got, sizeof got) == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
    CHECK (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
    CHECK (read_event (mon, NULL, got, sizeof got) == ZMQ_EVENT_DISCONNECTED);
    close (fd);
    CHECK_RC (zmq_close (rep));
    CHECK_RC (zmq_close (mon));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* Version 2: event and value count as u64, the values, then local and remote addresses. */
static void test_version_2 (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = new_socket (ctx, ZMQ_PULL);
    void *push = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_socket_monitor_versioned (push, "inproc://mon-v2", ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 2,
                                            ZMQ_PAIR));
    void *mon = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_connect (mon, "inproc://mon-v2"));
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_bind (pull, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_getsockopt (pull, ZMQ_LAST_ENDPOINT, ep, &len));
    CHECK_RC (zmq_connect (push, ep));

    uint64_t ev = 0, count = 0, value = 1;
    char local[256] = {0}, remote[256] = {0};
    CHECK (zmq_recv (mon, &ev, sizeof ev, 0) == 8 && rcvmore (mon));
    CHECK (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    CHECK (zmq_recv (mon, &count, sizeof count, 0) == 8 && rcvmore (mon));
    CHECK (count == 1);
    CHECK (zmq_recv (mon, &value, sizeof value, 0) == 8 && rcvmore (mon));
    CHECK (value == 0);
    int n = zmq_recv (mon, local, sizeof local - 1, 0);
    CHECK (n > 0 && rcvmore (mon));
    n = zmq_recv (mon, remote, sizeof remote - 1, 0);
    CHECK (n > 0 && !rcvmore (mon));
    CHECK (strcmp (remote, ep) == 0);
    CHECK (strncmp (local, "tcp://127.0.0.1:", 16) == 0 && strcmp (local, ep) != 0);
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_close (mon));
    CHECK_RC (zmq_ctx_term (ctx));
}

#ifdef ZMQ_EVENT_PIPES_STATS
/* zmq_socket_monitor_pipes_stats: EINVAL without a monitor wanting PIPES_STATS, EAGAIN with
 * no pipes, else one event per pipe: two values (queued out, queued in), then both addresses. */
static void test_pipes_stats (void)
{
    void *ctx = zmq_ctx_new ();
    void *push = new_socket (ctx, ZMQ_PUSH);
    CHECK_ERR (zmq_socket_monitor_pipes_stats (push), EINVAL);
    CHECK_ERR (zmq_socket_monitor_pipes_stats (NULL), ENOTSOCK);
    CHECK_RC (zmq_socket_monitor_versioned (push, "inproc://mon-stats", ZMQ_EVENT_PIPES_STATS, 2, ZMQ_PAIR));
    void *mon = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_connect (mon, "inproc://mon-stats"));
    CHECK_ERR (zmq_socket_monitor_pipes_stats (push), EAGAIN);
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_bind (push, "tcp://127.0.0.1:*"));
    CHECK_RC (zmq_getsockopt (push, ZMQ_LAST_ENDPOINT, ep, &len));
    void *pull = new_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_connect (pull, ep));
    CHECK (zmq_send (push, "x", 1, 0) == 1); /* waits for the peer: the pipe exists after */
    char buf[8];
    CHECK (zmq_recv (pull, buf, sizeof buf, 0) == 1);
    CHECK_RC (zmq_socket_monitor_pipes_stats (push));
    uint64_t ev = 0, count = 0, out = 9, in = 9;
    char local[256] = {0}, remote[256] = {0};
    CHECK (zmq_recv (mon, &ev, sizeof ev, 0) == 8 && ev == ZMQ_EVENT_PIPES_STATS);
    CHECK (zmq_recv (mon, &count, sizeof count, 0) == 8 && count == 2);
    CHECK (zmq_recv (mon, &out, sizeof out, 0) == 8 && out <= 1);
    CHECK (zmq_recv (mon, &in, sizeof in, 0) == 8 && in == 0);
    CHECK (zmq_recv (mon, local, sizeof local - 1, 0) > 0 && strcmp (local, ep) == 0);
    CHECK (zmq_recv (mon, remote, sizeof remote - 1, 0) > 0 && !rcvmore (mon));
    CHECK (strncmp (remote, "tcp://127.0.0.1:", 16) == 0 && strcmp (remote, ep) != 0);
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (mon));
    CHECK_RC (zmq_ctx_term (ctx));
}
#endif

static void test_errors (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PAIR);
    CHECK_ERR (zmq_socket_monitor (NULL, "inproc://mon-e", ZMQ_EVENT_ALL), ENOTSOCK);
    CHECK_ERR (zmq_socket_monitor (s, "tcp://127.0.0.1:5555", ZMQ_EVENT_ALL), EPROTONOSUPPORT);
    CHECK_ERR (zmq_socket_monitor (s, "", ZMQ_EVENT_ALL), EINVAL);
    CHECK_ERR (zmq_socket_monitor (s, "inproc://mon-e", 0x10000), EINVAL);
    CHECK_ERR (zmq_socket_monitor_versioned (s, "inproc://mon-e", ZMQ_EVENT_ALL, 2, ZMQ_REQ), EINVAL);
    /* Stopping with no monitor set is fine; a monitor may then be set and replaced. */
    CHECK_RC (zmq_socket_monitor (s, NULL, 0));
    CHECK_RC (zmq_socket_monitor (s, "inproc://mon-e", ZMQ_EVENT_ALL));
    void *mon = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_connect (mon, "inproc://mon-e"));
    CHECK_RC (zmq_socket_monitor (s, "inproc://mon-e2", ZMQ_EVENT_ALL));
    const int stopped[] = {ZMQ_EVENT_MONITOR_STOPPED, 0};
    expect_events (mon, stopped, NULL);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_close (mon));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_tcp_sequences);
    RUN (test_protocol_error);
    RUN (test_version_2);
#ifdef ZMQ_EVENT_PIPES_STATS
    RUN (test_pipes_stats);
#endif
    RUN (test_errors);
    return test_main_end ();
}
