/* ZMQ_TCP_ACCEPT_FILTER and ZMQ_IPC_FILTER_UID/GID/PID (zmq_setsockopt(3)): a listener with
 * filters closes connections none of them admits; an empty value clears the list; a malformed
 * TCP filter is EINVAL. A refused peer shows as a receive that times out (bounded, 300 ms:
 * nothing can arrive over a closed connection); an admitted one as a round trip. */
#include "testutil.h"

/* Binds `srv` (its filters already set) on `transport`, connects a fresh PAIR and reports
 * whether a message from it arrives. Closes both. */
static int gets_through (void *ctx, void *srv, const char *transport)
{
    void *cli = new_socket (ctx, ZMQ_PAIR);
    set_int (srv, ZMQ_RCVTIMEO, 300);
    bind_connect (srv, cli, transport);
    send_str (cli, "hello", ZMQ_DONTWAIT);
    char buf[16];
    int n = zmq_recv (srv, buf, sizeof buf, 0);
    int ok = n == 5 && memcmp (buf, "hello", 5) == 0;
    if (n < 0)
        CHECK (zmq_errno () == EAGAIN);
    CHECK_RC (zmq_close (cli));
    CHECK_RC (zmq_close (srv));
    return ok;
}

static void set_str (void *s, const char *v)
{
    CHECK_RC (zmq_setsockopt (s, ZMQ_TCP_ACCEPT_FILTER, v, v ? strlen (v) : 0));
}

static void test_tcp_filter_syntax (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PAIR);
    const char *bad[] = {"foo", "0.0.0.0foo", "0.0.0.0/foo", "0.0.0.0/", "0.0.0.0/-1",
                         "0.0.0.0/33", "::1/129", "localhost"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK_ERR (zmq_setsockopt (s, ZMQ_TCP_ACCEPT_FILTER, bad[i], strlen (bad[i])), EINVAL);
    set_str (s, "10.0.0.0/8");
    CHECK_ERR (zmq_setsockopt (s, ZMQ_TCP_ACCEPT_FILTER, "::1", 3), EINVAL); /* needs IPV6 */
    set_int (s, ZMQ_IPV6, 1);
    set_str (s, "::1");
    set_str (s, "[fe80::]/10");
    set_str (s, NULL);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_tcp_filter_admits_and_refuses (void)
{
    void *ctx = zmq_ctx_new ();
    void *s;

    s = new_socket (ctx, ZMQ_PAIR);
    set_str (s, "127.0.0.255/32");
    CHECK (!gets_through (ctx, s, "tcp"));

    s = new_socket (ctx, ZMQ_PAIR);
    set_str (s, "127.0.0.255/32");
    set_str (s, "127.0.0.0/8"); /* the list is a union */
    CHECK (gets_through (ctx, s, "tcp"));

    s = new_socket (ctx, ZMQ_PAIR);
    set_str (s, "127.0.0.255/32");
    set_str (s, NULL); /* cleared: everyone */
    CHECK (gets_through (ctx, s, "tcp"));

    s = new_socket (ctx, ZMQ_PAIR);
    set_str (s, "0.0.0.0/0");
    CHECK (gets_through (ctx, s, "tcp"));

    s = new_socket (ctx, ZMQ_PAIR);
    set_str (s, "127.0.0.1/31");
    CHECK (gets_through (ctx, s, "tcp"));

    /* TCP filters do not apply to ipc. */
    s = new_socket (ctx, ZMQ_PAIR);
    set_str (s, "127.0.0.255/32");
    CHECK (gets_through (ctx, s, "ipc"));

    CHECK_RC (zmq_ctx_term (ctx));
}

static void set_id (void *s, int opt, int v)
{
    CHECK_RC (zmq_setsockopt (s, opt, &v, sizeof v));
}

static void test_ipc_filters (void)
{
    void *ctx = zmq_ctx_new ();
    const int opts[] = {ZMQ_IPC_FILTER_UID, ZMQ_IPC_FILTER_GID, ZMQ_IPC_FILTER_PID};
    const int mine[] = {(int) getuid (), (int) getgid (), (int) getpid ()};
    for (int i = 0; i < 3; i++) {
        void *s = new_socket (ctx, ZMQ_PAIR);
        set_id (s, opts[i], mine[i] + 1);
        CHECK (!gets_through (ctx, s, "ipc"));

        s = new_socket (ctx, ZMQ_PAIR);
        set_id (s, opts[i], mine[i] + 1);
        set_id (s, opts[i], mine[i]);
        CHECK (gets_through (ctx, s, "ipc"));

        s = new_socket (ctx, ZMQ_PAIR);
        set_id (s, opts[i], mine[i] + 1);
        CHECK_RC (zmq_setsockopt (s, opts[i], NULL, 0));
        CHECK (gets_through (ctx, s, "ipc"));

        s = new_socket (ctx, ZMQ_PAIR);
        CHECK_ERR (zmq_setsockopt (s, opts[i], "ab", 2), EINVAL);
        CHECK_RC (zmq_close (s));
    }
    /* Any one list admitting is enough: a wrong uid and the right pid. */
    void *s = new_socket (ctx, ZMQ_PAIR);
    set_id (s, ZMQ_IPC_FILTER_UID, (int) getuid () + 1);
    set_id (s, ZMQ_IPC_FILTER_PID, (int) getpid ());
    CHECK (gets_through (ctx, s, "ipc"));
    /* IPC filters do not apply to tcp. */
    s = new_socket (ctx, ZMQ_PAIR);
    set_id (s, ZMQ_IPC_FILTER_UID, (int) getuid () + 1);
    CHECK (gets_through (ctx, s, "tcp"));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_tcp_filter_syntax);
    RUN (test_tcp_filter_admits_and_refuses);
    RUN (test_ipc_filters);
    return test_main_end ();
}
