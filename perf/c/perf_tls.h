/* The TLS of the ws://, wss:// and tls:// runs of the C perf tools. libzmq's perf tools have no
   such switch; these take the certificates from the environment so the command line stays
   libzmq's, and do nothing when it names none:
     PERF_WSS_CERT, PERF_WSS_KEY   files with the binding side's certificate and key (PEM)
     PERF_WSS_TRUST                file with the connecting side's trust anchor (PEM)
     PERF_WSS_HOSTNAME             the name the connecting side verifies (ZMQ_WSS_HOSTNAME)
   The options are libzmq's draft ZMQ_WSS_* (the same numbers in oxmq). */
#ifndef OXMQ_PERF_TLS_H
#define OXMQ_PERF_TLS_H

#include <zmq.h>
#include "perf_util.h"

#ifndef ZMQ_WSS_KEY_PEM
#define ZMQ_WSS_KEY_PEM 103
#define ZMQ_WSS_CERT_PEM 104
#define ZMQ_WSS_TRUST_PEM 105
#define ZMQ_WSS_HOSTNAME 106
#endif

/* Sets option `option` of `s` to the contents of the file named by the environment variable
   `var`, if it is set. */
static inline void tls_set_file (void *s, int option, const char *var)
{
    const char *path = getenv (var);
    if (!path || !*path)
        return;
    FILE *f = fopen (path, "rb");
    if (!f)
        die (var, strerror (errno));
    char buf[16384];
    size_t n = fread (buf, 1, sizeof buf, f);
    fclose (f);
    if (zmq_setsockopt (s, option, buf, n) != 0)
        die ("zmq_setsockopt (WSS)", zmq_strerror (zmq_errno ()));
}

/* The binding side (`server`) presents a certificate; the connecting side verifies it. */
static inline void tls_setup (void *s, int server)
{
    if (server) {
        tls_set_file (s, ZMQ_WSS_CERT_PEM, "PERF_WSS_CERT");
        tls_set_file (s, ZMQ_WSS_KEY_PEM, "PERF_WSS_KEY");
    } else {
        tls_set_file (s, ZMQ_WSS_TRUST_PEM, "PERF_WSS_TRUST");
        const char *host = getenv ("PERF_WSS_HOSTNAME");
        if (host && *host && zmq_setsockopt (s, ZMQ_WSS_HOSTNAME, host, strlen (host)) != 0)
            die ("zmq_setsockopt (WSS_HOSTNAME)", zmq_strerror (zmq_errno ()));
    }
}

#endif
