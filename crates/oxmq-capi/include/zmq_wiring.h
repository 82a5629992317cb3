/*  zmq_wiring.h: the ØMQ wiring API (exchanges, queues, scopes, a name service) on oxmq.

    The seed's C extension (ØMQ 0.3's czmq.h) with its function names and signatures, so its
    programs build with only the include line changed; exported from oxmq's libzmq.so.5
    (link with -lzmq). Named zmq_wiring.h, not czmq.h, which is the unrelated CZMQ library's.

    A handle is used by one thread at a time (as a libzmq socket). Where the seed's functions
    return void they set errno (0 on success); the _ex variants beside them return 0 or -1
    with errno. Errors: ENOENT unknown exchange or queue; EADDRINUSE name taken;
    EHOSTUNREACH name service unreachable; EINVAL bad location, scope, style or id;
    EAGAIN timeout; EFAULT null pointer or destroyed handle.

    Hosts: "" runs (or joins) the embedded name service on 127.0.0.1:5682
    (OXMQ_WIRING_PORT overrides the port); "host" or "host:port" names a server
    (oxmq-name-server, default port 5682). Locations (global scope): "" picks an address,
    "interface:port" binds there. See README.md, "The wiring API".
*/
#ifndef OXMQ_ZMQ_WIRING_H_INCLUDED
#define OXMQ_ZMQ_WIRING_H_INCLUDED

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CZMQ_SCOPE_LOCAL 0
#define CZMQ_SCOPE_GLOBAL 1
#define CZMQ_SCOPE_PROCESS 2 /* oxmq: every handle of this process */

#define CZMQ_STYLE_FANOUT 0       /* every bound queue gets every message */
#define CZMQ_STYLE_LOAD_BALANCE 1 /* each message goes to one bound queue */

typedef void (czmq_free_fn) (void *data_);

/*  The seed's functions.  */
void *czmq_create (const char *host_);
void czmq_destroy (void *obj_);
int czmq_create_exchange (void *obj_, const char *exchange_, int scope_,
    const char *nic_);
int czmq_create_queue (void *obj_, const char *queue_, int scope_,
    const char *nic_);
void czmq_bind (void *obj_, const char *exchange_, const char *queue_);
/*  With ffn_, the library owns data_ and calls ffn_ (data_) when done (no copy);
    without, data_ is copied.  */
void czmq_send (void *obj_, int eid_, void *data_, size_t size,
    czmq_free_fn *ffn_);
/*  The caller owns *data_ and calls (*ffn_) (*data_) when *ffn_ is not NULL.  */
void czmq_receive (void *obj_, void **data_, size_t *size_,
    czmq_free_fn **ffn_);

/*  Error-returning variants and additions.  */
int czmq_destroy_ex (void *obj_);
int czmq_create_exchange_ex (void *obj_, const char *exchange_, int scope_,
    const char *nic_, int style_);
int czmq_bind_ex (void *obj_, const char *exchange_, const char *queue_);
int czmq_send_ex (void *obj_, int eid_, void *data_, size_t size_,
    czmq_free_fn *ffn_);
/*  oxmq: sends a copy of size_ bytes at data_ if that needs no wait: 0. Otherwise -1 with
    EAGAIN and nothing sent (a full queue, or an exchange with several destinations or
    reachable from other handles): the handle keeps the copy, which czmq_send_parked then
    sends (or send the data with czmq_send_ex; the next czmq_try_send drops the copy).  */
int czmq_try_send (void *obj_, int eid_, const void *data_, size_t size_);
/*  oxmq: sends the copy czmq_try_send kept for exchange eid_, waiting as czmq_send_ex does;
    the copy is dropped either way. EINVAL when none is kept for eid_.  */
int czmq_send_parked (void *obj_, int eid_);

/*  oxmq: zero-copy sends and receives with libzmq's message object (zmq.h), as
    zmq_msg_send and zmq_msg_recv. czmq_send_msg sends the message in msg_ (say from
    zmq_msg_init_size, filled in place) without copying its body, waiting as czmq_send_ex
    does: its size, and msg_ is empty again; -1 and errno with msg_ unchanged.
    czmq_receive_msg waits up to timeout_ms_ (-1: forever) for the next message of any
    queue and puts it in msg_ (initialised; what it held is released): its size, or -1
    and errno (EAGAIN on timeout); read it with zmq_msg_data and zmq_msg_size.  */
struct zmq_msg_t;
int czmq_send_msg (void *obj_, int eid_, struct zmq_msg_t *msg_);
/*  oxmq: czmq_send_msg if that needs no wait; else -1 with EAGAIN, nothing sent and msg_
    unchanged (as czmq_try_send), and czmq_send_msg sends it.  */
int czmq_try_send_msg (void *obj_, int eid_, struct zmq_msg_t *msg_);
int czmq_receive_msg (void *obj_, struct zmq_msg_t *msg_, int timeout_ms_);
/*  timeout_ms_ -1 waits forever; EAGAIN when it runs out.  */
int czmq_receive_ex (void *obj_, void **data_, size_t *size_,
    czmq_free_fn **ffn_, int timeout_ms_);
/*  oxmq: the next message copied into buf_ (len_ bytes), its length in *size_. A longer
    message is not consumed: -1 with EMSGSIZE and its length in *size_, and the next
    receive returns it.  */
int czmq_receive_into (void *obj_, void *buf_, size_t len_, size_t *size_,
    int timeout_ms_);
/*  The ZMTP endpoint of a global name (for plain ZeroMQ peers: SUB to an exchange,
    PUSH to a queue); returns its length.  */
int czmq_lookup (void *obj_, const char *name_, char *endpoint_, size_t len_);

#ifdef __cplusplus
}
#endif

#endif
