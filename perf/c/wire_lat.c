/* wire_lat local <bind-to> <message-size> <roundtrip-count> [spin|block|poll|pollctl|spinctl]
   wire_lat remote <connect-to> <message-size> <roundtrip-count> [spin|block|poll|pollctl|spinctl]

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
   The other modes are not limits: they rebuild, step by step, how oxmq's direct receive waits
   (socket/direct.rs), so the harness can say what each step of that structure costs:
     poll                 a wait is a poll(2) on the socket and an eventfd (oxmq's mailbox),
                          after a non-blocking read found nothing, then the read;
     pollctl              poll, and around each wait an epoll_ctl pair on an epoll instance a
                          second thread sleeps on (oxmq's I/O thread): the socket is registered
                          there edge-triggered and its input is switched off for the wait and on
                          again after it, as oxmq takes the input over from its I/O thread;
     spinctl              spin, with the same epoll_ctl pair around each wait.
   Both sides must use the same mode. */
#include "wire_util.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/* The wait structure (see the modes above). */
static int wait_poll;      /* sleep in poll(2) on the socket and an eventfd */
static int wait_ctl;       /* an epoll_ctl pair around each wait */
static int mailbox_fd = -1;
static int io_epoll = -1;

/* The second thread of pollctl/spinctl: sleeps on the epoll instance, as an idle I/O thread. */
static void *io_thread (void *arg)
{
    struct epoll_event ev[4];
    for (;;)
        if (epoll_wait (io_epoll, ev, 4, -1) < 0 && errno != EINTR)
            break;
    return arg;
}

/* Switches the socket's input on the epoll instance off (a wait begins) or on (it ended). */
static void set_input (int fd, int on)
{
    if (!wait_ctl)
        return;
    struct epoll_event ev = {.events = (on ? EPOLLIN : 0) | EPOLLET, .data = {.fd = fd}};
    if (epoll_ctl (io_epoll, EPOLL_CTL_MOD, fd, &ev) != 0)
        die ("epoll_ctl", strerror (errno));
}

/* Reads one whole frame into buf (room for `cap` bytes); returns its length. In spin mode the
   descriptor is non-blocking and EAGAIN is retried after a sched_yield. */
static size_t recv_frame (int fd, unsigned char *buf, size_t cap)
{
    size_t got = 0, need = 2;
    while (got < need) {
        ssize_t r = read (fd, buf + got, cap - got);
        if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (wait_poll) {
                struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = mailbox_fd, .events = POLLIN}};
                if (poll (p, 2, -1) < 0 && errno != EINTR)
                    die ("poll", strerror (errno));
            } else
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
    const char *mode = argc == 6 ? argv[5] : "block";
    int spin = strcmp (mode, "spin") == 0 || strcmp (mode, "spinctl") == 0;
    wait_poll = strcmp (mode, "poll") == 0 || strcmp (mode, "pollctl") == 0;
    wait_ctl = strcmp (mode, "pollctl") == 0 || strcmp (mode, "spinctl") == 0;
    if (!ok || !(spin || wait_poll || strcmp (mode, "block") == 0)) {
        printf ("usage: wire_lat local <bind-to> <message-size> <roundtrip-count> [spin|block|poll|pollctl|spinctl]\n"
                "       wire_lat remote <connect-to> <message-size> <roundtrip-count> [spin|block|poll|pollctl|spinctl]\n");
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
    if ((spin || wait_poll) && fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) != 0)
        die ("fcntl", strerror (errno));
    if (wait_poll && (mailbox_fd = eventfd (0, EFD_NONBLOCK)) < 0)
        die ("eventfd", strerror (errno));
    if (wait_ctl) {
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data = {.fd = fd}};
        pthread_t io;
        if ((io_epoll = epoll_create1 (0)) < 0 || epoll_ctl (io_epoll, EPOLL_CTL_ADD, fd, &ev) != 0)
            die ("epoll", strerror (errno));
        if (pthread_create (&io, NULL, io_thread, NULL) != 0)
            die ("pthread_create", "failed");
    }
    if (local) {
        for (long i = 0; i < roundtrips; i++) {
            set_input (fd, 0);
            size_t n = recv_frame (fd, in, cap);
            set_input (fd, 1);
            wire_write_all (fd, in, n);
        }
    } else {
        double start = now_us ();
        for (long i = 0; i < roundtrips; i++) {
            /* Input off before the request leaves: the echo must not reach the I/O thread. */
            set_input (fd, 0);
            wire_write_all (fd, frame, flen);
            size_t n = recv_frame (fd, in, cap);
            set_input (fd, 1);
            if (n != flen)
                die ("read", "echo of another length");
        }
        print_latency (size, roundtrips, now_us () - start);
    }
    close (fd);
    free (frame);
    free (in);
    return 0;
}
