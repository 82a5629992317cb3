/* wire_thr local <bind-to> <message-size> <message-count>
   wire_thr remote <connect-to> <message-size> <message-count>

   The wire's throughput limit for a framed message stream: one connection (tcp:// or ipc://,
   one thread per side, no messaging layer), <message-count> ZMTP-style frames (a 2-byte header
   for bodies under 256 bytes, 9 bytes otherwise) of <message-size> bytes.
   - remote (the sender) encodes each message into a 64 KiB batch (header, then the body copied
     from the message) and writes the batch when the next frame would not fit; a frame larger
     than the batch is written as header + body with one writev, from the message itself.
   - local (the receiver) reads up to 64 KiB at a time and walks every frame: parses its header,
     reads the body's first and last byte into a checksum, counts the message. It times from
     its first read to its last message and prints local_thr's lines.
   So the figure is what a messaging layer could reach if encoding and decoding were the only
   work it did per message: no queues, no message objects, no threads between the application
   and the socket. */
#include "wire_util.h"

#include <sys/uio.h>

#define BATCH (64 * 1024)

static volatile unsigned sink; /* the checksum ends here, so the reads are not optimised away */

static void receive (int fd, long count, long size)
{
    unsigned char *buf = malloc (BATCH);
    if (!buf)
        die ("malloc", "out of memory");
    size_t start = 0, end = 0; /* unread bytes: buf[start..end) */
    uint64_t left = 0;         /* body bytes still to pass when a body spans reads */
    int in_body = 0, need_first = 0;
    unsigned sum = 0;
    long msgs = 0;
    double t0 = 0;
    while (msgs < count) {
        size_t avail = end - start;
        if (in_body) {
            if (avail == 0) {
                start = end = 0;
            } else {
                if (need_first)
                    sum += buf[start];
                need_first = 0;
                size_t take = avail < left ? avail : (size_t) left;
                start += take;
                left -= take;
                if (left == 0) {
                    sum += buf[start - 1];
                    msgs++;
                    in_body = 0;
                }
                continue;
            }
        } else if (avail >= 2 && avail >= wire_header_len (buf[start])) {
            uint64_t len = wire_body_size (buf + start);
            start += wire_header_len (buf[start]);
            if (len <= end - start) {
                if (len)
                    sum += buf[start] + buf[start + len - 1];
                start += len;
                msgs++;
            } else {
                in_body = need_first = 1;
                left = len;
            }
            continue;
        } else {
            /* a partial header: keep it, read more behind it */
            memmove (buf, buf + start, avail);
            start = 0;
            end = avail;
        }
        ssize_t n = read (fd, buf + end, BATCH - end);
        if (n <= 0)
            die ("read", n == 0 ? "peer closed early" : strerror (errno));
        if (t0 == 0)
            t0 = now_us ();
        end += (size_t) n;
    }
    double elapsed = now_us () - t0;
    sink = sum;
    /* The walk must end exactly where the sender's stream ends (it shuts its side down after the
       last frame): a misparsed frame would leave bytes over, or have counted short. */
    if (in_body || start != end || read (fd, buf, BATCH) != 0)
        die ("read", "the stream does not end at the last frame");
    print_throughput (size, count, elapsed);
    free (buf);
}

static void send_all (int fd, long count, long size)
{
    unsigned char *batch = malloc (BATCH);
    unsigned char *msg = malloc ((size_t) size + 1);
    if (!batch || !msg)
        die ("malloc", "out of memory");
    for (long i = 0; i < size; i++)
        msg[i] = (unsigned char) i;
    size_t fill = 0;
    size_t frame = (size < 256 ? 2 : 9) + (size_t) size;
    for (long i = 0; i < count; i++) {
        if (fill + frame > BATCH) {
            wire_write_all (fd, batch, fill);
            fill = 0;
        }
        if (frame > BATCH) {
            unsigned char hdr[9];
            struct iovec iov[2] = {{hdr, wire_header (hdr, (uint64_t) size)}, {msg, (size_t) size}};
            size_t want = iov[0].iov_len + iov[1].iov_len;
            ssize_t w = writev (fd, iov, 2);
            if (w <= 0)
                die ("writev", strerror (errno));
            if ((size_t) w < want) { /* the rest of what the kernel did not take */
                size_t done = (size_t) w;
                if (done < iov[0].iov_len) {
                    wire_write_all (fd, hdr + done, iov[0].iov_len - done);
                    done = iov[0].iov_len;
                }
                wire_write_all (fd, msg + (done - iov[0].iov_len), (size_t) size - (done - iov[0].iov_len));
            }
            continue;
        }
        fill += wire_header (batch + fill, (uint64_t) size);
        memcpy (batch + fill, msg, (size_t) size);
        fill += (size_t) size;
    }
    if (fill)
        wire_write_all (fd, batch, fill);
    free (batch);
    free (msg);
}

int main (int argc, char *argv[])
{
    if (argc != 5 || (strcmp (argv[1], "local") != 0 && strcmp (argv[1], "remote") != 0)) {
        printf ("usage: wire_thr local <bind-to> <message-size> <message-count>\n"
                "       wire_thr remote <connect-to> <message-size> <message-count>\n");
        return 1;
    }
    long size = parse_count (argv[3], "message-size");
    long count = parse_count (argv[4], "message-count");
    if (strcmp (argv[1], "local") == 0) {
        int fd = wire_accept (argv[2]);
        receive (fd, count, size);
        close (fd);
    } else {
        int fd = wire_connect (argv[2]);
        send_all (fd, count, size);
        /* wait until the receiver has read everything and closed */
        shutdown (fd, SHUT_WR);
        char b[256];
        while (read (fd, b, sizeof b) > 0) {
        }
        close (fd);
    }
    return 0;
}
