/*  The C front end's contracts: errors as errno, the free function honoured without a copy,
    received buffers owned by the caller, timeouts. `api HOST UNREACHABLE_HOST`. Prints
    "N passed, M failed" and exits non-zero on any failure. */
#include <zmq_wiring.h>
#include <zmq.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;
#define CHECK(cond) do { if (cond) passed++; else { failed++; \
    fprintf (stderr, "FAIL %s:%d: %s (errno %d %s)\n", __FILE__, __LINE__, #cond, errno, zmq_strerror (errno)); } } while (0)

static int freed;
static void *freed_ptr;
static void count_free (void *p) { freed++; freed_ptr = p; free (p); }

struct held { void *data; czmq_free_fn *ffn; };
static void *free_elsewhere (void *arg)
{
    struct held *b = arg;
    b->ffn (b->data);
    return NULL;
}

int main (int argc, char *argv[])
{
    if (argc != 3) { fprintf (stderr, "usage: api HOST UNREACHABLE_HOST\n"); return 2; }
    const char *host = argv[1];

    /* Unreachable and malformed hosts: NULL and errno, quickly. */
    errno = 0;
    CHECK (czmq_create (argv[2]) == NULL && errno == EHOSTUNREACH);
    CHECK (czmq_create ("bad host:1") == NULL && errno == EINVAL);

    void *h = czmq_create (host);
    CHECK (h != NULL);
    void *h2 = czmq_create (host);
    CHECK (h2 != NULL);

    int eid = czmq_create_exchange (h, "E", CZMQ_SCOPE_LOCAL, NULL);
    CHECK (eid == 0);
    CHECK (czmq_create_queue (h, "Q", CZMQ_SCOPE_LOCAL, NULL) == 0);
    CHECK (czmq_bind_ex (h, "E", "Q") == 0);

    /* Errors on every call. */
    CHECK (czmq_bind_ex (h, "E", "nope") == -1 && errno == ENOENT);
    errno = 0;
    czmq_bind (h, "nope", "Q");
    CHECK (errno == ENOENT);
    czmq_bind (h, "E", "Q");
    CHECK (errno == 0);
    CHECK (czmq_create_queue (h, "Q", CZMQ_SCOPE_LOCAL, NULL) == -1 && errno == EADDRINUSE);
    CHECK (czmq_create_queue (h, "G", CZMQ_SCOPE_GLOBAL, "") == 1);
    CHECK (czmq_create_queue (h2, "G", CZMQ_SCOPE_GLOBAL, "") == -1 && errno == EADDRINUSE);
    CHECK (czmq_create_queue (h, "L", CZMQ_SCOPE_GLOBAL, "127.0.0.1:99999") == -1 && errno == EINVAL);
    CHECK (czmq_create_queue (h, "L", 7, "") == -1 && errno == EINVAL);
    CHECK (czmq_create_exchange_ex (h, "L", CZMQ_SCOPE_LOCAL, "", 9) == -1 && errno == EINVAL);
    CHECK (czmq_create_exchange (NULL, "L", CZMQ_SCOPE_LOCAL, "") == -1 && errno == EFAULT);
    CHECK (czmq_create_exchange (h, NULL, CZMQ_SCOPE_LOCAL, "") == -1 && errno == EFAULT);

    /* A bad exchange id: an error, and the buffer handed over is still freed once. */
    freed = 0;
    char *b = malloc (100);
    CHECK (czmq_send_ex (h, 42, b, 100, count_free) == -1 && errno == EINVAL);
    CHECK (freed == 1);

    /* Receive with nothing queued ends at its timeout. */
    void *data; size_t size; czmq_free_fn *ffn;
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 50) == -1 && errno == EAGAIN);
    CHECK (czmq_receive_ex (h2, &data, &size, &ffn, 50) == -1 && errno == EINVAL); /* no queue */

    /* Zero copy, in the handle (inproc): the receiver gets the sender's very buffer, and the
       free function runs once, when the receiver releases it. */
    freed = 0;
    size_t big = 100000;
    char *zb = malloc (big);
    memset (zb, 'z', big);
    CHECK (czmq_send_ex (h, eid, zb, big, count_free) == 0);
    CHECK (freed == 0);
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 5000) == 0);
    CHECK (size == big && data == zb && ffn != NULL);
    CHECK (freed == 0);
    if (ffn) ffn (data);
    CHECK (freed == 1 && freed_ptr == zb);

    /* Without a free function the buffer is copied: the caller may reuse it at once. */
    char small[16] = "abc";
    CHECK (czmq_send_ex (h, eid, small, 4, NULL) == 0);
    small[0] = 'X';
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 5000) == 0);
    CHECK (size == 4 && memcmp (data, "abc", 4) == 0 && ffn != NULL);
    if (ffn) ffn (data);

    /* A body small enough to live inside the message is copied, and its buffer freed before
       czmq_send returns. */
    freed = 0;
    char *sb = malloc (8);
    memcpy (sb, "tiny", 5);
    CHECK (czmq_send_ex (h, eid, sb, 5, count_free) == 0);
    CHECK (freed == 1 && freed_ptr == sb);
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 5000) == 0);
    CHECK (size == 5 && memcmp (data, "tiny", 5) == 0);
    if (ffn) ffn (data);

    /* Received buffers stay the caller's until it frees them: a second receive does not
       reuse the first's, and a buffer may be freed on another thread (which keeps it for
       its own receives and frees it when it exits; valgrind sees no leak). */
    CHECK (czmq_send_ex (h, eid, "one", 4, NULL) == 0 && czmq_send_ex (h, eid, "two", 4, NULL) == 0);
    struct held b1 = {0}, b2 = {0};
    CHECK (czmq_receive_ex (h, &b1.data, &size, &b1.ffn, 5000) == 0 && size == 4 && b1.ffn != NULL);
    CHECK (czmq_receive_ex (h, &b2.data, &size, &b2.ffn, 5000) == 0 && size == 4 && b2.ffn != NULL);
    CHECK (b1.data != b2.data && memcmp (b1.data, "one", 4) == 0 && memcmp (b2.data, "two", 4) == 0);
    pthread_t other;
    CHECK (pthread_create (&other, NULL, free_elsewhere, &b1) == 0 && pthread_join (other, NULL) == 0);
    if (b2.ffn) b2.ffn (b2.data);

    /* czmq_try_send: a copy, sent at once when that needs no wait. */
    char tb[4] = "try";
    CHECK (czmq_try_send (h, eid, tb, 4) == 0);
    tb[0] = 'X';
    void *tdata; size_t tsize; czmq_free_fn *tffn;
    CHECK (czmq_receive_ex (h, &tdata, &tsize, &tffn, 5000) == 0 && tsize == 4 && memcmp (tdata, "try", 4) == 0);
    if (tffn) tffn (tdata);
    CHECK (czmq_try_send (h, 42, tb, 4) == -1 && errno == EINVAL);
    CHECK (czmq_try_send (h, eid, NULL, 4) == -1 && errno == EFAULT);
    /* A full queue: EAGAIN, and what was refused was not sent. */
    long accepted = 0;
    while (accepted < 1000000 && czmq_try_send (h, eid, "f", 1) == 0)
        accepted++;
    CHECK (errno == EAGAIN && accepted > 0 && accepted < 1000000);
    long drained = 0;
    while (czmq_receive_ex (h, &tdata, &tsize, &tffn, 0) == 0) {
        drained++;
        if (tffn) tffn (tdata);
    }
    CHECK (drained == accepted);
    /* The refused message's copy was kept: czmq_send_parked sends it, once. */
    CHECK (czmq_send_parked (h, eid) == 0);
    CHECK (czmq_receive_ex (h, &tdata, &tsize, &tffn, 5000) == 0 && tsize == 1 && *(char *) tdata == 'f');
    if (tffn) tffn (tdata);
    CHECK (czmq_send_parked (h, eid) == -1 && errno == EINVAL);
    /* An exchange with two queues: not tried (EAGAIN, nothing sent); czmq_send_parked sends
       the copy kept (not to another exchange), czmq_send_ex the data. */
    int meid = czmq_create_exchange (h, "M", CZMQ_SCOPE_LOCAL, NULL);
    CHECK (czmq_create_queue (h, "Q2", CZMQ_SCOPE_LOCAL, NULL) >= 0);
    CHECK (czmq_bind_ex (h, "M", "Q") == 0 && czmq_bind_ex (h, "M", "Q2") == 0);
    CHECK (czmq_try_send (h, meid, "m", 1) == -1 && errno == EAGAIN);
    CHECK (czmq_receive_ex (h, &tdata, &tsize, &tffn, 50) == -1 && errno == EAGAIN);
    CHECK (czmq_send_parked (h, meid) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK (czmq_receive_ex (h, &tdata, &tsize, &tffn, 5000) == 0 && tsize == 1 && *(char *) tdata == 'm');
        if (tffn) tffn (tdata);
    }
    CHECK (czmq_try_send (h, meid, "n", 1) == -1 && errno == EAGAIN);
    CHECK (czmq_send_parked (h, eid) == -1 && errno == EINVAL);
    CHECK (czmq_send_ex (h, meid, "m", 1, NULL) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK (czmq_receive_ex (h, &tdata, &tsize, &tffn, 5000) == 0 && tsize == 1 && *(char *) tdata == 'm');
        if (tffn) tffn (tdata);
    }

    /* An empty message. */
    CHECK (czmq_send_ex (h, eid, NULL, 0, NULL) == 0);
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 5000) == 0);
    CHECK (size == 0 && data == NULL && ffn == NULL);

    /* czmq_receive_into: into the caller's buffer; a message longer than it stays for the
       next receive (EMSGSIZE, its length reported), which may be of either kind. */
    char rbuf[8];
    size_t got = 0;
    CHECK (czmq_send_ex (h, eid, "0123456789", 10, NULL) == 0);
    CHECK (czmq_receive_into (h, rbuf, sizeof rbuf, &got, 5000) == -1 && errno == EMSGSIZE && got == 10);
    char rbig[16];
    got = 0;
    CHECK (czmq_receive_into (h, rbig, sizeof rbig, &got, 0) == 0 && got == 10 && memcmp (rbig, "0123456789", 10) == 0);
    CHECK (czmq_send_ex (h, eid, "abcdefghij", 10, NULL) == 0);
    CHECK (czmq_receive_into (h, rbuf, sizeof rbuf, &got, 5000) == -1 && errno == EMSGSIZE);
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 0) == 0 && size == 10 && memcmp (data, "abcdefghij", 10) == 0);
    if (ffn) ffn (data);
    CHECK (czmq_send_ex (h, eid, "xy", 2, NULL) == 0);
    CHECK (czmq_receive_into (h, rbuf, sizeof rbuf, &got, 5000) == 0 && got == 2 && memcmp (rbuf, "xy", 2) == 0);
    CHECK (czmq_receive_into (h, rbuf, sizeof rbuf, &got, 50) == -1 && errno == EAGAIN);
    CHECK (czmq_receive_into (h, rbuf, sizeof rbuf, NULL, 50) == -1 && errno == EFAULT);

    /* czmq_send_msg and czmq_receive_msg: libzmq's message object, no copy of the body. */
    zmq_msg_t zm;
    CHECK (zmq_msg_init_size (&zm, 100000) == 0);
    memset (zmq_msg_data (&zm), 'z', 100000);
    ((char *) zmq_msg_data (&zm))[99999] = 'Z';
    void *zbody = zmq_msg_data (&zm);
    CHECK (czmq_send_msg (h, 42, &zm) == -1 && errno == EINVAL && zmq_msg_size (&zm) == 100000);
    CHECK (czmq_send_msg (h, eid, &zm) == 100000 && zmq_msg_size (&zm) == 0);
    zmq_msg_t rm;
    CHECK (zmq_msg_init_size (&rm, 7) == 0); /* what it held is released by the receive */
    CHECK (czmq_receive_msg (h, &rm, 5000) == 100000 && zmq_msg_size (&rm) == 100000);
    CHECK (((char *) zmq_msg_data (&rm))[0] == 'z' && ((char *) zmq_msg_data (&rm))[99999] == 'Z');
    CHECK (zmq_msg_data (&rm) == zbody); /* inproc: the very same buffer */
    CHECK (zmq_msg_init_size (&zm, 3) == 0 && czmq_try_send_msg (h, eid, &zm) == 3 && zmq_msg_size (&zm) == 0);
    CHECK (czmq_receive_msg (h, &rm, 5000) == 3);
    CHECK (zmq_msg_init_size (&zm, 2) == 0 && czmq_try_send_msg (h, meid, &zm) == -1 && errno == EAGAIN);
    CHECK (zmq_msg_size (&zm) == 2 && czmq_receive_msg (h, &rm, 0) == -1 && errno == EAGAIN);
    CHECK (czmq_send_msg (h, meid, &zm) == 2); /* both of M's queues */
    CHECK (czmq_receive_msg (h, &rm, 5000) == 2 && czmq_receive_msg (h, &rm, 5000) == 2);
    CHECK (zmq_msg_init_size (&zm, 3) == 0 && czmq_send_msg (h, eid, &zm) == 3);
    CHECK (czmq_send_ex (h, eid, NULL, 0, NULL) == 0);
    CHECK (czmq_receive_msg (h, &rm, 5000) == 3 && zmq_msg_size (&rm) == 3);
    CHECK (czmq_receive_msg (h, &rm, 5000) == 0 && zmq_msg_size (&rm) == 0);
    CHECK (czmq_receive_msg (h, &rm, 50) == -1 && errno == EAGAIN);
    /* A message czmq_receive_into left queued is the next one czmq_receive_msg returns. */
    CHECK (czmq_send_ex (h, eid, "0123456789", 10, NULL) == 0);
    CHECK (czmq_receive_into (h, rbuf, sizeof rbuf, &got, 5000) == -1 && errno == EMSGSIZE);
    CHECK (czmq_receive_msg (h, &rm, 0) == 10 && memcmp (zmq_msg_data (&rm), "0123456789", 10) == 0);
    CHECK (czmq_receive_msg (h, NULL, 0) == -1 && errno == EFAULT);
    zmq_msg_close (&zm);
    zmq_msg_close (&rm);

    /* Over tcp (global queue G of this handle, bound from a global exchange): the sender's
       buffer is freed once written. */
    int geid = czmq_create_exchange (h, "GE", CZMQ_SCOPE_GLOBAL, "");
    CHECK (geid == meid + 1);
    CHECK (czmq_bind_ex (h, "GE", "G") == 0);
    char ep[256];
    CHECK (czmq_lookup (h, "GE", ep, sizeof ep) > 0 && strncmp (ep, "tcp://", 6) == 0);
    CHECK (czmq_lookup (h, "GE", ep, 4) == -1 && errno == ENAMETOOLONG);
    CHECK (czmq_lookup (h, "nope", ep, sizeof ep) == -1 && errno == ENOENT);
    freed = 0;
    zb = malloc (big);
    memset (zb, 'g', big);
    CHECK (czmq_send_ex (h, geid, zb, big, count_free) == 0);
    /* E is bound to Q (inproc) only; GE to G: exactly one copy arrives. */
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 5000) == 0);
    CHECK (size == big && ((char *) data)[0] == 'g' && ((char *) data)[big - 1] == 'g');
    if (ffn) ffn (data);
    CHECK (czmq_receive_ex (h, &data, &size, &ffn, 100) == -1 && errno == EAGAIN);
    /* The same with libzmq's message object, over tcp. */
    zmq_msg_t tm;
    CHECK (zmq_msg_init_size (&tm, big) == 0);
    memset (zmq_msg_data (&tm), 't', big);
    CHECK (czmq_send_msg (h, geid, &tm) == (int) big && zmq_msg_size (&tm) == 0);
    CHECK (czmq_receive_msg (h, &tm, 5000) == (int) big);
    CHECK (((char *) zmq_msg_data (&tm))[0] == 't' && ((char *) zmq_msg_data (&tm))[big - 1] == 't');
    zmq_msg_close (&tm);

    czmq_destroy (h2);
    CHECK (errno == 0);
    CHECK (czmq_destroy_ex (h) == 0);
    CHECK (freed == 1);
    CHECK (czmq_destroy_ex (NULL) == -1 && errno == EFAULT);

    printf ("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
