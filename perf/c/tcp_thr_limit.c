/* tcp_thr_limit local <port> <message-size> <message-count>
   tcp_thr_limit remote <host> <port> <message-size> <message-count>

   The plain-TCP limit for throughput: moves exactly the bytes of <message-count> messages of
   <message-size> bytes over one blocking TCP connection, with no messaging layer (no framing,
   no queues, no threads), using the largest writes the kernel takes. The receiver times from
   its first byte to its last and prints libzmq's local_thr lines, so the figure reads as
   "messages per second if messaging were free". */
#include "perf_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHUNK (1 << 20) /* per-call buffer; the kernel takes as much of it as it can */

static void big_buffers (int fd)
{
    int v = 4 << 20;
    setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
    setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
}

int main (int argc, char *argv[])
{
    int local = argc == 5 && strcmp (argv[1], "local") == 0;
    int remote = argc == 6 && strcmp (argv[1], "remote") == 0;
    if (!local && !remote) {
        printf ("usage: tcp_thr_limit local <port> <message-size> <message-count>\n"
                "       tcp_thr_limit remote <host> <port> <message-size> <message-count>\n");
        return 1;
    }
    long size = parse_count (argv[argc - 2], "message-size");
    long count = parse_count (argv[argc - 1], "message-count");
    long long total = (long long) size * count;
    char *buf = calloc (1, CHUNK);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;

    if (local) {
        int ls = socket (AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt (ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        big_buffers (ls);
        addr.sin_port = htons ((uint16_t) parse_count (argv[2], "port"));
        addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
        if (bind (ls, (struct sockaddr *) &addr, sizeof addr) != 0 || listen (ls, 1) != 0)
            die ("bind/listen", strerror (errno));
        int fd = accept (ls, NULL, NULL);
        if (fd < 0)
            die ("accept", strerror (errno));
        /* Timed from accept: small totals arrive in a single read, so "from the first byte"
           would measure nothing. The sender writes right after connecting. */
        double start = now_us ();
        long long got = 0;
        while (got < total) {
            ssize_t n = read (fd, buf, CHUNK);
            if (n <= 0)
                die ("read", n == 0 ? "peer closed early" : strerror (errno));
            got += n;
        }
        double elapsed = now_us () - start;
        print_throughput (size, count, elapsed);
        close (fd);
        close (ls);
    } else {
        int fd = socket (AF_INET, SOCK_STREAM, 0);
        big_buffers (fd);
        int one = 1;
        setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        addr.sin_port = htons ((uint16_t) parse_count (argv[3], "port"));
        if (inet_pton (AF_INET, argv[2], &addr.sin_addr) != 1)
            die ("address", argv[2]);
        /* the receiver may not be listening yet: retry for up to 5 s */
        int rc = -1;
        for (int i = 0; i < 500 && rc != 0; i++) {
            rc = connect (fd, (struct sockaddr *) &addr, sizeof addr);
            if (rc != 0) {
                close (fd);
                usleep (10000);
                fd = socket (AF_INET, SOCK_STREAM, 0);
                big_buffers (fd);
                setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            }
        }
        if (rc != 0)
            die ("connect", strerror (errno));
        long long sent = 0;
        while (sent < total) {
            size_t want = total - sent < CHUNK ? (size_t) (total - sent) : CHUNK;
            ssize_t n = write (fd, buf, want);
            if (n <= 0)
                die ("write", strerror (errno));
            sent += n;
        }
        shutdown (fd, SHUT_WR);
        /* wait for the receiver to finish reading (it closes) */
        while (read (fd, buf, CHUNK) > 0) {
        }
        close (fd);
    }
    free (buf);
    return 0;
}
