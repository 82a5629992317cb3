/* wire_lat local <bind-to> <message-size> <roundtrip-count> [spin|block]
   wire_lat remote <connect-to> <message-size> <roundtrip-count> [spin|block]

   The wire's latency limit: a ping-pong of one ZMTP-style frame (2- or 9-byte header and a
   <message-size> body) over one connection (tcp:// or ipc://, TCP_NODELAY on tcp), no
   messaging layer. local echoes each frame back; remote sends, waits for the echo, and prints
   remote_lat's lines (one-way latency = round trip / 2).
     block (the default)  plain blocking reads: each side sleeps in the kernel until the frame
                          arrives, as a messaging layer without a receive spin does;
     spin                 both sides busy-poll non-blocking reads: no sleep and no wake-up, the
                          floor for a layer that spins before it blocks (oxmq's receive spin).
                          Between empty polls a side yields its core (sched_yield), as oxmq's
                          spin does: two spinners the scheduler put on one core then take
                          turns at once instead of each burning a time slice.
   Both sides must use the same mode. */
#include "wire_util.h"

#include <fcntl.h>
#include <sched.h>

/* Reads one whole frame into buf (room for `cap` bytes); returns its length. In spin mode the
   descriptor is non-blocking and EAGAIN is retried after a sched_yield. */
static size_t recv_frame (int fd, unsigned char *buf, size_t cap)
{
    size_t got = 0, need = 2;
    while (got < need) {
        ssize_t r = read (fd, buf + got, cap - got);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            sched_yield ();
            continue;
        }
        if (r <= 0)
            die ("read", r == 0 ? "peer closed" : strerror (errno));
        got += (size_t) r;
        if (got >= 2) {
            size_t hl = wire_header_len (buf[0]);
            need = got >= hl ? hl + (size_t) wire_body_size (buf) : hl;
            if (need > cap)
                die ("read", "frame larger than the message size");
        }
    }
    return got;
}

int main (int argc, char *argv[])
{
    int ok = (argc == 5 || argc == 6) && (strcmp (argv[1], "local") == 0 || strcmp (argv[1], "remote") == 0);
    int spin = argc == 6 && strcmp (argv[5], "spin") == 0;
    if (!ok || (argc == 6 && !spin && strcmp (argv[5], "block") != 0)) {
        printf ("usage: wire_lat local <bind-to> <message-size> <roundtrip-count> [spin|block]\n"
                "       wire_lat remote <connect-to> <message-size> <roundtrip-count> [spin|block]\n");
        return 1;
    }
    long size = parse_count (argv[3], "message-size");
    long roundtrips = parse_count (argv[4], "roundtrip-count");
    size_t cap = 9 + (size_t) size;
    unsigned char *frame = calloc (1, cap);
    unsigned char *in = calloc (1, cap);
    if (!frame || !in)
        die ("calloc", "out of memory");
    size_t flen = wire_header (frame, (uint64_t) size) + (size_t) size;

    int local = strcmp (argv[1], "local") == 0;
    int fd = local ? wire_accept (argv[2]) : wire_connect (argv[2]);
    if (spin && fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) != 0)
        die ("fcntl", strerror (errno));
    if (local) {
        for (long i = 0; i < roundtrips; i++) {
            size_t n = recv_frame (fd, in, cap);
            wire_write_all (fd, in, n);
        }
    } else {
        double start = now_us ();
        for (long i = 0; i < roundtrips; i++) {
            wire_write_all (fd, frame, flen);
            if (recv_frame (fd, in, cap) != flen)
                die ("read", "echo of another length");
        }
        print_latency (size, roundtrips, now_us () - start);
    }
    close (fd);
    free (frame);
    free (in);
    return 0;
}
