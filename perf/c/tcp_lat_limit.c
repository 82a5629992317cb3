/* tcp_lat_limit local <port> <message-size> <roundtrip-count>
   tcp_lat_limit remote <host> <port> <message-size> <roundtrip-count>

   The plain-TCP limit for latency: a blocking ping-pong of <message-size> bytes (1 for the
   classic figure) over one TCP_NODELAY connection, no messaging layer. The remote side times
   the round trips and prints remote_lat's lines (one-way latency = elapsed / 2 / count). */
#include "perf_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

static void read_full (int fd, char *buf, long n)
{
    long got = 0;
    while (got < n) {
        ssize_t r = read (fd, buf + got, (size_t) (n - got));
        if (r <= 0)
            die ("read", r == 0 ? "peer closed" : strerror (errno));
        got += r;
    }
}

static void write_full (int fd, const char *buf, long n)
{
    long done = 0;
    while (done < n) {
        ssize_t w = write (fd, buf + done, (size_t) (n - done));
        if (w <= 0)
            die ("write", strerror (errno));
        done += w;
    }
}

int main (int argc, char *argv[])
{
    int local = argc == 5 && strcmp (argv[1], "local") == 0;
    int remote = argc == 6 && strcmp (argv[1], "remote") == 0;
    if (!local && !remote) {
        printf ("usage: tcp_lat_limit local <port> <message-size> <roundtrip-count>\n"
                "       tcp_lat_limit remote <host> <port> <message-size> <roundtrip-count>\n");
        return 1;
    }
    long size = parse_count (argv[argc - 2], "message-size");
    long roundtrips = parse_count (argv[argc - 1], "roundtrip-count");
    char *buf = calloc (1, (size_t) size + 1);
    int one = 1;
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;

    if (local) {
        int ls = socket (AF_INET, SOCK_STREAM, 0);
        setsockopt (ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        addr.sin_port = htons ((uint16_t) parse_count (argv[2], "port"));
        addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
        if (bind (ls, (struct sockaddr *) &addr, sizeof addr) != 0 || listen (ls, 1) != 0)
            die ("bind/listen", strerror (errno));
        int fd = accept (ls, NULL, NULL);
        if (fd < 0)
            die ("accept", strerror (errno));
        setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        for (long i = 0; i < roundtrips; i++) {
            read_full (fd, buf, size);
            write_full (fd, buf, size);
        }
        close (fd);
        close (ls);
    } else {
        int fd = -1, rc = -1;
        addr.sin_port = htons ((uint16_t) parse_count (argv[3], "port"));
        if (inet_pton (AF_INET, argv[2], &addr.sin_addr) != 1)
            die ("address", argv[2]);
        for (int i = 0; i < 500 && rc != 0; i++) {
            if (fd >= 0)
                close (fd);
            fd = socket (AF_INET, SOCK_STREAM, 0);
            rc = connect (fd, (struct sockaddr *) &addr, sizeof addr);
            if (rc != 0)
                usleep (10000);
        }
        if (rc != 0)
            die ("connect", strerror (errno));
        setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        double start = now_us ();
        for (long i = 0; i < roundtrips; i++) {
            write_full (fd, buf, size);
            read_full (fd, buf, size);
        }
        print_latency (size, roundtrips, now_us () - start);
        close (fd);
    }
    free (buf);
    return 0;
}
