/* ZMQ_SRCFD (zmq_msg_get(3), deprecated but in libzmq 4.3): a message received over tcp or
 * ipc names the descriptor of its connection; one that did not arrive on a connection gives
 * -1. */
#include "testutil.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

static void check_srcfd (const char *transport)
{
    void *ctx = zmq_ctx_new ();
    void *rep = new_socket (ctx, ZMQ_REP), *req = new_socket (ctx, ZMQ_REQ);
    bind_connect (rep, req, transport);
    send_str (req, "hi", 0);
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init (&m));
    CHECK (zmq_msg_recv (&m, rep, 0) == 2);
    int fd = zmq_msg_get (&m, ZMQ_SRCFD);
    CHECK (fd >= 0);
    CHECK_RC (zmq_msg_close (&m));
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    CHECK (getpeername (fd, (struct sockaddr *) &ss, &len) == 0);
    if (strcmp (transport, "tcp") == 0) {
        CHECK (ss.ss_family == AF_INET);
        CHECK (((struct sockaddr_in *) &ss)->sin_addr.s_addr == htonl (INADDR_LOOPBACK));
    } else {
        CHECK (ss.ss_family == AF_UNIX);
    }
    CHECK_RC (zmq_close (req));
    CHECK_RC (zmq_close (rep));
    CHECK_RC (zmq_ctx_term (ctx)); /* the connection, and its descriptor, are gone now */
    CHECK (fcntl (fd, F_GETFD) == -1 && errno == EBADF);
}

static void test_srcfd_tcp (void) { check_srcfd ("tcp"); }
static void test_srcfd_ipc (void) { check_srcfd ("ipc"); }

static void test_srcfd_without_connection (void)
{
    zmq_msg_t m;
    CHECK_RC (zmq_msg_init_size (&m, 3));
    CHECK (zmq_msg_get (&m, ZMQ_SRCFD) == -1);
    CHECK_RC (zmq_msg_close (&m));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_srcfd_tcp);
    RUN (test_srcfd_ipc);
    RUN (test_srcfd_without_connection);
    return test_main_end ();
}
