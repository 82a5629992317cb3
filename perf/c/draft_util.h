/* Shared bits of draft_thr and draft_lat: the command line `local|remote <endpoint>
   <message-size> <count> <pattern>`, the socket (bound for local; connected for remote, a
   PEER through zmq_connect_peer) and the message each send builds. */
#ifndef OXMQ_DRAFT_UTIL_H
#define OXMQ_DRAFT_UTIL_H

#define ZMQ_BUILD_DRAFT_API
#include <zmq.h>
#include "perf_util.h"

struct draft_run {
    int local;
    long size;
    long count;
    const char *pattern;
    void *ctx;
    void *socket;
    /* remote PEER: the routing id of the connection zmq_connect_peer made */
    uint32_t peer_id;
};

/* Parses the command line (usage printed and exit 1 when it is wrong) and opens the socket of
   type `socket_type (pattern, local)`, bound or connected to argv[2]. */
static inline struct draft_run draft_open (int argc, char *argv[], const char *usage,
                                           int (*socket_type) (const char *, int))
{
    if (argc != 6 || (strcmp (argv[1], "local") && strcmp (argv[1], "remote"))) {
        printf ("usage: %s\n", usage);
        exit (1);
    }
    struct draft_run r = {!strcmp (argv[1], "local"), parse_count (argv[3], "message-size"),
                          parse_count (argv[4], "count"), argv[5], zmq_ctx_new (), NULL, 0};
    int type = socket_type (r.pattern, r.local);
    r.socket = zmq_socket (r.ctx, type);
    if (!r.socket)
        die ("zmq_socket", zmq_strerror (zmq_errno ()));
    if (r.local) {
        if (zmq_bind (r.socket, argv[2]) != 0)
            die ("zmq_bind", zmq_strerror (zmq_errno ()));
    } else if (type == ZMQ_PEER) {
        r.peer_id = zmq_connect_peer (r.socket, argv[2]);
        if (r.peer_id == 0)
            die ("zmq_connect_peer", zmq_strerror (zmq_errno ()));
    } else if (zmq_connect (r.socket, argv[2]) != 0)
        die ("zmq_connect", zmq_strerror (zmq_errno ()));
    return r;
}

/* Builds the next message to send into `msg` (zeroed bytes; a PEER's addressed to its peer). */
static inline void draft_fill (const struct draft_run *r, zmq_msg_t *msg)
{
    if (zmq_msg_init_size (msg, (size_t) r->size) != 0)
        die ("zmq_msg_init_size", zmq_strerror (zmq_errno ()));
    if (r->size)
        memset (zmq_msg_data (msg), 0, (size_t) r->size);
    if (r->peer_id && zmq_msg_set_routing_id (msg, r->peer_id) != 0)
        die ("zmq_msg_set_routing_id", zmq_strerror (zmq_errno ()));
}

static inline void draft_close (struct draft_run *r)
{
    zmq_close (r->socket);
    zmq_ctx_term (r->ctx);
}

#endif
