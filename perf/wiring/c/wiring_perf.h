/* Shared bits of the wiring perf tools: the socket tools' output lines (perf/c/perf_util.h,
   which the harness parses) and checked wrappers over the czmq_* calls. */
#ifndef OXMQ_WIRING_PERF_H
#define OXMQ_WIRING_PERF_H

#include <zmq.h>
#include <zmq_wiring.h>
#include "perf_util.h"

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
