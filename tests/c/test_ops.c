/* Operating oxmq across hosts from C: connects that follow DNS (ZMQ_OXMQ_DNS_FOLLOW,
   ZMQ_OXMQ_DNS_IVL), the socket's metrics name (ZMQ_OXMQ_NAME), the counters added for
   them (oxmq_socket_stats_t) and the metrics text (oxmq_ctx_metrics). Name changes and
   faults between hosts are tested in scripts/test.d/90-hosts.sh. */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef OXMQ_ZMQ_H
/* Built against libzmq's zmq.h: declare oxmq's extensions (the library is oxmq's). */
#define ZMQ_OXMQ_DNS_FOLLOW 0x4f580010
#define ZMQ_OXMQ_DNS_IVL 0x4f580011
#define ZMQ_OXMQ_NAME 0x4f580012
typedef struct oxmq_socket_stats_t
{
    uint64_t msgs_in, bytes_in, msgs_out, bytes_out;
    uint64_t dropped_hwm, dropped_no_route, dropped_oversized;
    uint64_t peers, connections, reconnects, handshake_failures;
    uint64_t wire_bytes_in, wire_bytes_out;
    uint64_t dropped_malformed, dropped_unsendable;
    uint64_t dropped_disconnected, dropped_vanished, hwm_reached, protocol_errors;
} oxmq_socket_stats_t;
int oxmq_socket_stats (void *s_, oxmq_socket_stats_t *stats_, size_t size_);
int oxmq_ctx_metrics (void *context_, char *buf_, size_t size_, int timeout_ms_);
#endif

static int get_int (void *s, int opt)
{
    int v = -12345;
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, opt, &v, &len));
    CHECK (len == sizeof v);
    return v;
}

static void test_follow_options (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PUSH);
    CHECK (get_int (s, ZMQ_OXMQ_DNS_FOLLOW) == 0);
    CHECK (get_int (s, ZMQ_OXMQ_DNS_IVL) == 30000);
    int bad = 2;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_OXMQ_DNS_FOLLOW, &bad, sizeof bad), EINVAL);
    bad = 99;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_OXMQ_DNS_IVL, &bad, sizeof bad), EINVAL);
    set_int (s, ZMQ_OXMQ_DNS_FOLLOW, 1);
    set_int (s, ZMQ_OXMQ_DNS_IVL, 500);
    CHECK (get_int (s, ZMQ_OXMQ_DNS_FOLLOW) == 1);
    CHECK (get_int (s, ZMQ_OXMQ_DNS_IVL) == 500);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* localhost is a name (in /etc/hosts): a followed connect finds the peer through it. */
static void test_follow_localhost (void)
{
    void *ctx = zmq_ctx_new ();
    void *pull = new_socket (ctx, ZMQ_PULL), *push = new_socket (ctx, ZMQ_PUSH);
    CHECK_RC (zmq_bind (pull, "tcp://127.0.0.1:*"));
    char ep[128];
    size_t len = sizeof ep;
    CHECK_RC (zmq_getsockopt (pull, ZMQ_LAST_ENDPOINT, ep, &len));
    char named[160];
    snprintf (named, sizeof named, "tcp://localhost:%s", strrchr (ep, ':') + 1);
    set_int (push, ZMQ_OXMQ_DNS_FOLLOW, 1);
    CHECK_RC (zmq_connect (push, named));
    len = sizeof ep;
    CHECK_RC (zmq_getsockopt (push, ZMQ_LAST_ENDPOINT, ep, &len));
    CHECK (strcmp (ep, named) == 0);
    set_int (pull, ZMQ_RCVTIMEO, 5000);
    for (int i = 0; i < 10; i++)
        send_str (push, "via dns", 0);
    char buf[16];
    for (int i = 0; i < 10; i++)
        CHECK (zmq_recv (pull, buf, sizeof buf, 0) == 7);
    oxmq_socket_stats_t st;
    CHECK_RC (oxmq_socket_stats (push, &st, sizeof st));
    CHECK (st.msgs_out == 10 && st.peers == 1 && st.dropped_vanished == 0);
    CHECK_RC (zmq_disconnect (push, named));
    CHECK_ERR (zmq_disconnect (push, named), ENOENT);
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_name_option (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PUB);
    char v[80];
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_OXMQ_NAME, v, &len));
    CHECK (len == 1 && v[0] == 0);
    CHECK_RC (zmq_setsockopt (s, ZMQ_OXMQ_NAME, "prices", 6));
    len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_OXMQ_NAME, v, &len));
    CHECK (len == 7 && strcmp (v, "prices") == 0);
    CHECK_ERR (zmq_setsockopt (s, ZMQ_OXMQ_NAME, "two words", 9), EINVAL);
    char long_name[65];
    memset (long_name, 'x', sizeof long_name);
    CHECK_ERR (zmq_setsockopt (s, ZMQ_OXMQ_NAME, long_name, sizeof long_name), EINVAL);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_metrics_text (void)
{
    void *ctx = zmq_ctx_new ();
    void *push = new_socket (ctx, ZMQ_PUSH), *pull = new_socket (ctx, ZMQ_PULL);
    CHECK_RC (zmq_setsockopt (push, ZMQ_OXMQ_NAME, "jobs", 4));
    CHECK_RC (zmq_bind (pull, "inproc://ops-metrics"));
    CHECK_RC (zmq_connect (push, "inproc://ops-metrics"));
    for (int i = 0; i < 3; i++)
        send_str (push, "abcd", 0);
    /* This thread owns the sockets: ask without waiting, use one of them, ask again. */
    int n = oxmq_ctx_metrics (ctx, NULL, 0, 0);
    CHECK (n > 0);
    oxmq_socket_stats_t st;
    CHECK_RC (oxmq_socket_stats (push, &st, sizeof st));
    n = oxmq_ctx_metrics (ctx, NULL, 0, 0);
    char *text = malloc ((size_t) n + 1);
    CHECK (oxmq_ctx_metrics (ctx, text, (size_t) n + 1, 0) == n);
    CHECK (strlen (text) == (size_t) n);
    CHECK (strstr (text, "# TYPE oxmq_socket_sent_messages_total counter\n") != NULL);
    CHECK (strstr (text,
                   "oxmq_socket_sent_messages_total{type=\"PUSH\",name=\"jobs\","
                   "endpoint=\"inproc://ops-metrics\"} 3\n")
           != NULL);
    CHECK (strstr (text,
                   "oxmq_socket_sent_bytes_total{type=\"PUSH\",name=\"jobs\","
                   "endpoint=\"inproc://ops-metrics\"} 12\n")
           != NULL);
    /* Cut short, as snprintf: NUL-terminated, the full length returned. */
    char small[10];
    CHECK (oxmq_ctx_metrics (ctx, small, sizeof small, 0) >= (int) sizeof small);
    CHECK (strlen (small) == sizeof small - 1 && strncmp (small, text, 9) == 0);
    free (text);
    CHECK_ERR (oxmq_ctx_metrics (ctx, NULL, 1, 0), EFAULT);
    CHECK_ERR (oxmq_ctx_metrics (ctx, small, sizeof small, -1), EINVAL);
    CHECK_ERR (oxmq_ctx_metrics (NULL, small, sizeof small, 0), EFAULT);
    CHECK_RC (zmq_close (push));
    CHECK_RC (zmq_close (pull));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* A free loopback port (the kernel's pick, released at once). */
static int free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    CHECK (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
    CHECK (getsockname (fd, (struct sockaddr *) &a, &len) == 0);
    close (fd);
    return ntohs (a.sin_port);
}

/* One HTTP request to 127.0.0.1:port; the whole response into buf. */
static void http_get (int port, const char *request, char *buf, size_t size)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                            .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    CHECK (connect (fd, (struct sockaddr *) &a, sizeof a) == 0);
    CHECK (write (fd, request, strlen (request)) == (ssize_t) strlen (request));
    size_t n = 0;
    ssize_t r;
    while (n + 1 < size && (r = read (fd, buf + n, size - 1 - n)) > 0)
        n += (size_t) r;
    buf[n] = 0;
    close (fd);
}

/* OXMQ_METRICS_ADDR, read when the process makes its first context: GET /metrics is served. */
static void test_metrics_endpoint (void)
{
    int port = free_port ();
    char addr[32];
    snprintf (addr, sizeof addr, "127.0.0.1:%d", port);
    setenv ("OXMQ_METRICS_ADDR", addr, 1);
    void *ctx = zmq_ctx_new ();
    void *pub = new_socket (ctx, ZMQ_PUB);
    CHECK_RC (zmq_setsockopt (pub, ZMQ_OXMQ_NAME, "ticks", 5));
    CHECK_RC (zmq_bind (pub, "inproc://ops-endpoint"));
    static char resp[65536];
    http_get (port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", resp, sizeof resp);
    CHECK (strncmp (resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
    CHECK (strstr (resp, "Content-Type: text/plain; version=0.0.4") != NULL);
    CHECK (strstr (resp, "oxmq_sockets{type=\"PUB\",name=\"ticks\",endpoint=\"inproc://ops-endpoint\"} 1\n")
           != NULL);
    http_get (port, "GET /nothing HTTP/1.1\r\n\r\n", resp, sizeof resp);
    CHECK (strncmp (resp, "HTTP/1.1 404", 12) == 0);
    CHECK_RC (zmq_close (pub));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_follow_options);
    RUN (test_follow_localhost);
    RUN (test_name_option);
    RUN (test_metrics_text);
    RUN (test_metrics_endpoint);
    return test_main_end ();
}
