/* Shared bits of the wire-limit tools (wire_thr, wire_lat): ZeroMQ-style endpoints
   ("tcp://127.0.0.1:5555", "ipc:///tmp/x.ipc") on plain stream sockets, with no messaging
   layer, and the ZMTP frame header (RFC 23: flags byte, then a 1-byte size for bodies under
   256 bytes or an 8-byte big-endian size with the LONG flag). */
#ifndef OXMQ_WIRE_UTIL_H
#define OXMQ_WIRE_UTIL_H

#include "perf_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define WIRE_LONG 0x02 /* ZMTP flag: 8-byte size follows */

/* Writes the frame header for a body of `size` bytes into `out` (room for 9 bytes); returns
   its length (2 or 9). */
static inline size_t wire_header (unsigned char *out, uint64_t size)
{
    if (size < 256) {
        out[0] = 0;
        out[1] = (unsigned char) size;
        return 2;
    }
    out[0] = WIRE_LONG;
    for (int i = 0; i < 8; i++)
        out[1 + i] = (unsigned char) (size >> (56 - 8 * i));
    return 9;
}

/* The body size of a complete header at `h` (its length is 2 or 9 by h[0]). */
static inline uint64_t wire_body_size (const unsigned char *h)
{
    if (!(h[0] & WIRE_LONG))
        return h[1];
    uint64_t v = 0;
    for (int i = 1; i <= 8; i++)
        v = (v << 8) | h[i];
    return v;
}

static inline size_t wire_header_len (unsigned char flags)
{
    return (flags & WIRE_LONG) ? 9 : 2;
}

struct wire_ep {
    int ipc;
    struct sockaddr_in in;
    struct sockaddr_un un;
};

static inline struct wire_ep wire_parse (const char *ep)
{
    struct wire_ep e;
    memset (&e, 0, sizeof e);
    if (strncmp (ep, "ipc://", 6) == 0) {
        e.ipc = 1;
        e.un.sun_family = AF_UNIX;
        if (strlen (ep + 6) >= sizeof e.un.sun_path)
            die ("endpoint", "ipc path too long");
        strcpy (e.un.sun_path, ep + 6);
        return e;
    }
    if (strncmp (ep, "tcp://", 6) != 0)
        die ("endpoint", "want tcp://HOST:PORT or ipc://PATH");
    char host[64];
    const char *colon = strrchr (ep + 6, ':');
    if (!colon || (size_t) (colon - (ep + 6)) >= sizeof host)
        die ("endpoint", ep);
    memcpy (host, ep + 6, (size_t) (colon - (ep + 6)));
    host[colon - (ep + 6)] = 0;
    e.in.sin_family = AF_INET;
    e.in.sin_port = htons ((uint16_t) parse_count (colon + 1, "port"));
    if (strcmp (host, "*") == 0)
        e.in.sin_addr.s_addr = htonl (INADDR_ANY);
    else if (inet_pton (AF_INET, host, &e.in.sin_addr) != 1)
        die ("endpoint", host);
    return e;
}

static inline struct sockaddr *wire_addr (struct wire_ep *e, socklen_t *len)
{
    *len = e->ipc ? (socklen_t) sizeof e->un : (socklen_t) sizeof e->in;
    return e->ipc ? (struct sockaddr *) &e->un : (struct sockaddr *) &e->in;
}

/* TCP_NODELAY on tcp, as every ZeroMQ implementation sets it; nothing on ipc. */
static inline void wire_nodelay (struct wire_ep *e, int fd)
{
    int one = 1;
    if (!e->ipc)
        setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Binds, listens, accepts one peer; the listener is closed (and an ipc path removed) before
   returning the connection. Kernel default buffer sizes, as the messaging libraries use. */
static inline int wire_accept (const char *endpoint)
{
    struct wire_ep e = wire_parse (endpoint);
    socklen_t len;
    struct sockaddr *a = wire_addr (&e, &len);
    int ls = socket (e.ipc ? AF_UNIX : AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (e.ipc)
        unlink (e.un.sun_path);
    else
        setsockopt (ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind (ls, a, len) != 0 || listen (ls, 1) != 0)
        die ("bind/listen", strerror (errno));
    int fd = accept (ls, NULL, NULL);
    if (fd < 0)
        die ("accept", strerror (errno));
    close (ls);
    if (e.ipc)
        unlink (e.un.sun_path);
    wire_nodelay (&e, fd);
    return fd;
}

/* Connects, retrying for up to 5 s while the binder is not listening yet. */
static inline int wire_connect (const char *endpoint)
{
    struct wire_ep e = wire_parse (endpoint);
    socklen_t len;
    struct sockaddr *a = wire_addr (&e, &len);
    for (int i = 0; i < 500; i++) {
        int fd = socket (e.ipc ? AF_UNIX : AF_INET, SOCK_STREAM, 0);
        if (connect (fd, a, len) == 0) {
            wire_nodelay (&e, fd);
            return fd;
        }
        close (fd);
        usleep (10000);
    }
    die ("connect", strerror (errno));
    return -1;
}

/* Writes all of `buf`; on a non-blocking descriptor it spins through EAGAIN. */
static inline void wire_write_all (int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write (fd, p, n);
        if (w < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (w <= 0)
            die ("write", strerror (errno));
        p += w;
        n -= (size_t) w;
    }
}

#endif
