/*
 * zmq.h must leave the application's names alone: oxmq's extensions are prefixed oxmq_, so a
 * program that defines names libzmq does not declare (as libzmq's own test_proxy.cpp defines
 * zmq_socket_stats_t) compiles against oxmq's header as against libzmq's. run.sh compiles
 * this file with both headers (oxmq's with -Werror); the case below only checks that it runs.
 */
#include "testutil.h"

typedef struct
{
    uint64_t msg_in;
    uint64_t bytes_in;
    uint64_t msg_out;
    uint64_t bytes_out;
} zmq_socket_stats_t;

typedef struct
{
    zmq_socket_stats_t frontend;
    zmq_socket_stats_t backend;
} zmq_proxy_stats_t;

static int zmq_socket_stats (zmq_socket_stats_t *s)
{
    return (int) s->msg_in;
}

static int zmq_socket_peer_stats (void)
{
    return 0;
}

static void test_application_names_compile (void)
{
    zmq_proxy_stats_t st = {{1, 0, 0, 0}, {0, 0, 0, 0}};
    CHECK (zmq_socket_stats (&st.frontend) == 1);
    CHECK (zmq_socket_peer_stats () == 0);
#ifdef OXMQ_ZMQ_H
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_PUB);
    oxmq_socket_stats_t os;
    CHECK_RC (oxmq_socket_stats (s, &os, sizeof os));
    CHECK (oxmq_socket_peer_stats (s, NULL, 0) == 0);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
#endif
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_application_names_compile);
    return test_main_end ();
}
