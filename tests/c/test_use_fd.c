/* ZMQ_USE_FD and ZMQ_BINDTODEVICE (zmq_setsockopt(3)).
 * USE_FD: a bind adopts a descriptor the application bound itself (tcp and ipc); the socket
 * then listens on it and owns it. BINDTODEVICE: tcp listeners and connections are tied to an
 * interface (here "lo", which needs CAP_NET_RAW: skipped, and said so, without it). */
#include "testutil.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

static void bounce_pair (void *a, void *b)
{
    send_str (b, "ping", 0);
    expect_str (a, "ping");
    send_str (a, "pong", 0);
    expect_str (b, "pong");
}

static void test_use_fd_option (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PUSH);
    int v = 0;
    size_t len = sizeof v;
    CHECK_RC (zmq_getsockopt (s, ZMQ_USE_FD, &v, &len));
    CHECK (v == -1 && len == sizeof v);
    v = 3;
    CHECK_RC (zmq_setsockopt (s, ZMQ_USE_FD, &v, sizeof v));
    CHECK_RC (zmq_getsockopt (s, ZMQ_USE_FD, &v, &len));
    CHECK (v == 3);
    v = -2;
    CHECK_ERR (zmq_setsockopt (s, ZMQ_USE_FD, &v, sizeof v), EINVAL);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

static void test_use_fd_tcp (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK)};
    CHECK (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
    CHECK (listen (fd, 10) == 0); /* libzmq needs it listening; oxmq would listen itself */
    socklen_t alen = sizeof a;
    CHECK (getsockname (fd, (struct sockaddr *) &a, &alen) == 0);
    char ep[64];
    snprintf (ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs (a.sin_port));

    void *ctx = zmq_ctx_new ();
    void *srv = new_socket (ctx, ZMQ_PAIR), *cli = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_setsockopt (srv, ZMQ_USE_FD, &fd, sizeof fd));
    CHECK_RC (zmq_bind (srv, ep));
    char last[64];
    size_t len = sizeof last;
    CHECK_RC (zmq_getsockopt (srv, ZMQ_LAST_ENDPOINT, last, &len));
    CHECK (strcmp (last, ep) == 0);
    CHECK_RC (zmq_connect (cli, ep));
    bounce_pair (srv, cli);
    CHECK_RC (zmq_close (cli));
    CHECK_RC (zmq_close (srv));
    CHECK_RC (zmq_ctx_term (ctx));
    CHECK (fcntl (fd, F_GETFD) == -1 && errno == EBADF); /* the socket closed it */
}

static void test_use_fd_ipc (void)
{
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf (a.sun_path, sizeof a.sun_path, "/tmp/oxmq-ctest-usefd-%d", (int) getpid ());
    unlink (a.sun_path);
    CHECK (bind (fd, (struct sockaddr *) &a, sizeof a) == 0);
    CHECK (listen (fd, 10) == 0);
    char ep[128];
    snprintf (ep, sizeof ep, "ipc://%s", a.sun_path);

    void *ctx = zmq_ctx_new ();
    void *srv = new_socket (ctx, ZMQ_REP), *cli = new_socket (ctx, ZMQ_REQ);
    CHECK_RC (zmq_setsockopt (srv, ZMQ_USE_FD, &fd, sizeof fd));
    CHECK_RC (zmq_bind (srv, ep));
    CHECK_RC (zmq_connect (cli, ep));
    bounce_pair (srv, cli);
    CHECK_RC (zmq_close (cli));
    CHECK_RC (zmq_close (srv));
    CHECK_RC (zmq_ctx_term (ctx));
    /* Not ours to remove: the path is still there (libzmq's contract). */
    CHECK (unlink (a.sun_path) == 0);
}

/* oxmq only: libzmq aborts on this one (an assertion in its tcp listener). */
static void test_use_fd_wrong_family (void)
{
    int fd = socket (AF_UNIX, SOCK_STREAM, 0);
    void *ctx = zmq_ctx_new ();
    void *srv = new_socket (ctx, ZMQ_PAIR);
    CHECK_RC (zmq_setsockopt (srv, ZMQ_USE_FD, &fd, sizeof fd));
    CHECK (zmq_bind (srv, "tcp://127.0.0.1:*") == -1);
    CHECK_RC (zmq_close (srv));
    CHECK_RC (zmq_ctx_term (ctx));
    CHECK (close (fd) == 0); /* refused: still the caller's */
}

static void test_bindtodevice (void)
{
    void *ctx = zmq_ctx_new ();
    void *srv = new_socket (ctx, ZMQ_PAIR), *cli = new_socket (ctx, ZMQ_PAIR);
    char dev[16];
    size_t len = sizeof dev;
    CHECK_RC (zmq_getsockopt (srv, ZMQ_BINDTODEVICE, dev, &len));
    CHECK (len == 1 && dev[0] == 0);
    CHECK_ERR (zmq_setsockopt (srv, ZMQ_BINDTODEVICE, "0123456789abcdefg", 17), EINVAL);
    CHECK_RC (zmq_setsockopt (srv, ZMQ_BINDTODEVICE, "lo", 2));
    CHECK_RC (zmq_setsockopt (cli, ZMQ_BINDTODEVICE, "lo", 2));
    len = sizeof dev;
    CHECK_RC (zmq_getsockopt (srv, ZMQ_BINDTODEVICE, dev, &len));
    CHECK (len == 3 && strcmp (dev, "lo") == 0);
    if (geteuid () == 0) {
        bind_connect (srv, cli, "tcp");
        bounce_pair (srv, cli);
        /* A device that does not exist: the bind fails (ENODEV from the kernel). */
        void *bad = new_socket (ctx, ZMQ_PAIR);
        CHECK_RC (zmq_setsockopt (bad, ZMQ_BINDTODEVICE, "oxmqnodev0", 10));
        CHECK (zmq_bind (bad, "tcp://127.0.0.1:*") == -1);
        CHECK_RC (zmq_close (bad));
    } else {
        printf ("# test_bindtodevice: not root, binding to an interface skipped\n");
    }
    CHECK_RC (zmq_close (cli));
    CHECK_RC (zmq_close (srv));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_use_fd_option);
    RUN (test_use_fd_tcp);
    RUN (test_use_fd_ipc);
    RUN (test_bindtodevice);
    RUN (test_use_fd_wrong_family);
    return test_main_end ();
}
