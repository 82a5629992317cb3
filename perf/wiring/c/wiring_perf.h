/* Shared bits of the wiring perf tools: the socket tools' output lines (perf/c/perf_util.h,
   which the harness parses) and checked wrappers over the czmq_* calls. Each tool takes an
   optional last argument "msg": it then sends and receives with libzmq's message object
   (czmq_send_msg, czmq_receive_msg: no copy, as the socket tools' zmq_msg_send and
   zmq_msg_recv) instead of the seed's calls (czmq_send copies a small body, czmq_receive
   hands out a copy of one up to 1 KiB). */
#ifndef OXMQ_WIRING_PERF_H
#define OXMQ_WIRING_PERF_H

#include <zmq.h>
#include <zmq_wiring.h>
#include "perf_util.h"
#include <string.h>

static inline void *w_create (const char *host)
{
    void *h = czmq_create (host);
    if (!h)
        die ("czmq_create", zmq_strerror (errno));
    return h;
}

static inline int w_check (int rc, const char *what)
{
    if (rc < 0)
        die (what, zmq_strerror (errno));
    return rc;
}

/* Sends `size` bytes: small bodies are copied (no free function, the buffer is reused);
   larger ones go without a copy in a fresh malloc'd buffer the library frees. */
static inline void w_send (void *h, int eid, void *small_buf, size_t size)
{
    if (size <= 4096) {
        w_check (czmq_send_ex (h, eid, small_buf, size, NULL), "czmq_send");
    } else {
        void *b = malloc (size);
        if (!b)
            die ("malloc", "out of memory");
        w_check (czmq_send_ex (h, eid, b, size, free), "czmq_send");
    }
}

/* The optional last argument: "msg" selects the zmq_msg_t calls. */
static inline int w_msg_mode (int argc, char *argv[], int base)
{
    if (argc == base + 1 && strcmp (argv[base], "msg") == 0)
        return 1;
    if (argc != base)
        return -1;
    return 0;
}

/* One message of `size` bytes from a fresh library buffer, sent without a copy. */
static inline void w_send_msg (void *h, int eid, size_t size)
{
    zmq_msg_t m;
    if (zmq_msg_init_size (&m, size) != 0)
        die ("zmq_msg_init_size", zmq_strerror (errno));
    if (czmq_send_msg (h, eid, &m) < 0)
        die ("czmq_send_msg", zmq_strerror (errno));
    zmq_msg_close (&m);
}

static inline size_t w_receive (void *h)
{
    void *data;
    size_t size;
    czmq_free_fn *ffn;
    w_check (czmq_receive_ex (h, &data, &size, &ffn, -1), "czmq_receive");
    if (ffn)
        ffn (data);
    return size;
}

#endif
