/*
 * zmq.h: the C interface of oxmq, ABI-compatible with libzmq 4.3.
 *
 * oxmq (https://github.com/...) is a ZeroMQ implementation in Rust. Its C library is built as
 * libzmq.so.5 / libzmq.a and exports libzmq's functions with libzmq's signatures, constants and
 * struct layouts, so a program written (and even compiled) against libzmq's zmq.h runs on it.
 * This header was written from libzmq's documented API (the zmq_*(3) man pages); constant
 * values are libzmq's, since binaries depend on them.
 *
 * Errors: functions return -1 (or NULL) and set errno; zmq_errno() returns it too. EFAULT for
 * null or invalid context/message pointers, ENOTSOCK for a null or closed socket, EINVAL for
 * bad arguments, unknown options and wrong option lengths.
 *
 * SPDX-License-Identifier: MPL-2.0
 */

#ifndef __ZMQ_H_INCLUDED__
#define __ZMQ_H_INCLUDED__

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------- */
/* Version: the libzmq release whose API and behaviour oxmq provides.                         */
/* ---------------------------------------------------------------------------------------- */

#define ZMQ_VERSION_MAJOR 4
#define ZMQ_VERSION_MINOR 3
#define ZMQ_VERSION_PATCH 5

#define ZMQ_MAKE_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
#define ZMQ_VERSION ZMQ_MAKE_VERSION (ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR, ZMQ_VERSION_PATCH)

/* Identifies this zmq.h as oxmq's (libzmq's does not define it). */
#define OXMQ_ZMQ_H 1

/* Symbol visibility. The library is Rust; this only matters to code that declares its own
   prototypes with the same macro. */
#if defined __GNUC__ && __GNUC__ >= 4
#define ZMQ_EXPORT __attribute__ ((visibility ("default")))
#else
#define ZMQ_EXPORT
#endif

#define ZMQ_DEFINED_STDINT 1

/* ---------------------------------------------------------------------------------------- */
/* Errors                                                                                     */
/* ---------------------------------------------------------------------------------------- */

/* Base of the error numbers libzmq defines itself, chosen not to collide with any OS. */
#define ZMQ_HAUSNUMERO 156384712

/* POSIX errno values some platforms lack (Linux has them all; the fallbacks keep the header
   portable and identical in meaning to libzmq's). */
#ifndef ENOTSUP
#define ENOTSUP (ZMQ_HAUSNUMERO + 1)
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT (ZMQ_HAUSNUMERO + 2)
#endif
#ifndef ENOBUFS
#define ENOBUFS (ZMQ_HAUSNUMERO + 3)
#endif
#ifndef ENETDOWN
#define ENETDOWN (ZMQ_HAUSNUMERO + 4)
#endif
#ifndef EADDRINUSE
#define EADDRINUSE (ZMQ_HAUSNUMERO + 5)
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL (ZMQ_HAUSNUMERO + 6)
#endif
#ifndef ECONNREFUSED
#define ECONNREFUSED (ZMQ_HAUSNUMERO + 7)
#endif
#ifndef EINPROGRESS
#define EINPROGRESS (ZMQ_HAUSNUMERO + 8)
#endif
#ifndef ENOTSOCK
#define ENOTSOCK (ZMQ_HAUSNUMERO + 9)
#endif
#ifndef EMSGSIZE
#define EMSGSIZE (ZMQ_HAUSNUMERO + 10)
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT (ZMQ_HAUSNUMERO + 11)
#endif
#ifndef ENETUNREACH
#define ENETUNREACH (ZMQ_HAUSNUMERO + 12)
#endif
#ifndef ECONNABORTED
#define ECONNABORTED (ZMQ_HAUSNUMERO + 13)
#endif
#ifndef ECONNRESET
#define ECONNRESET (ZMQ_HAUSNUMERO + 14)
#endif
#ifndef ENOTCONN
#define ENOTCONN (ZMQ_HAUSNUMERO + 15)
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT (ZMQ_HAUSNUMERO + 16)
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH (ZMQ_HAUSNUMERO + 17)
#endif
#ifndef ENETRESET
#define ENETRESET (ZMQ_HAUSNUMERO + 18)
#endif

/* ZeroMQ's own errors. */
#define EFSM (ZMQ_HAUSNUMERO + 51)           /* operation not valid in the socket's state */
#define ENOCOMPATPROTO (ZMQ_HAUSNUMERO + 52) /* transport not compatible with socket type */
#define ETERM (ZMQ_HAUSNUMERO + 53)          /* the context was terminated */
#define EMTHREAD (ZMQ_HAUSNUMERO + 54)       /* no I/O thread available */

/* The errno of this thread's last failed call. */
ZMQ_EXPORT int zmq_errno (void);
/* A static, human-readable text for an error number. Do not free it. */
ZMQ_EXPORT const char *zmq_strerror (int errnum_);
/* The version of the library at run time. */
ZMQ_EXPORT void zmq_version (int *major_, int *minor_, int *patch_);

/* ---------------------------------------------------------------------------------------- */
/* Contexts                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* Options (zmq_ctx_set / zmq_ctx_get). */
#define ZMQ_IO_THREADS 1
#define ZMQ_MAX_SOCKETS 2
#define ZMQ_SOCKET_LIMIT 3
#define ZMQ_THREAD_PRIORITY 3
#define ZMQ_THREAD_SCHED_POLICY 4
#define ZMQ_MAX_MSGSZ 5
#define ZMQ_MSG_T_SIZE 6
#define ZMQ_THREAD_AFFINITY_CPU_ADD 7
#define ZMQ_THREAD_AFFINITY_CPU_REMOVE 8
#define ZMQ_THREAD_NAME_PREFIX 9

/* Defaults of a new context. */
#define ZMQ_IO_THREADS_DFLT 1
#define ZMQ_MAX_SOCKETS_DFLT 1023
#define ZMQ_THREAD_PRIORITY_DFLT -1
#define ZMQ_THREAD_SCHED_POLICY_DFLT -1

ZMQ_EXPORT void *zmq_ctx_new (void);
/* Shuts the context down, then blocks until every socket of it is closed; frees it. */
ZMQ_EXPORT int zmq_ctx_term (void *context_);
/* Makes blocking and later calls on the context's sockets fail with ETERM. Does not free. */
ZMQ_EXPORT int zmq_ctx_shutdown (void *context_);
ZMQ_EXPORT int zmq_ctx_set (void *context_, int option_, int optval_);
ZMQ_EXPORT int zmq_ctx_get (void *context_, int option_);

/* Legacy names. */
ZMQ_EXPORT void *zmq_init (int io_threads_);
ZMQ_EXPORT int zmq_term (void *context_);
ZMQ_EXPORT int zmq_ctx_destroy (void *context_);

/* ---------------------------------------------------------------------------------------- */
/* Messages                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* An opaque 64-byte message, aligned to a pointer (as libzmq's). Use only through the
   zmq_msg_* functions; never copy it with memcpy. */
typedef struct zmq_msg_t
{
#if defined __GNUC__ || defined __clang__
    unsigned char _[64] __attribute__ ((aligned (sizeof (void *))));
#elif defined _MSC_VER
    __declspec (align (8)) unsigned char _[64];
#else
    unsigned char _[64];
#endif
} zmq_msg_t;

/* Called once, when the library no longer needs a buffer given to zmq_msg_init_data. It may
   run on any thread. */
typedef void (zmq_free_fn) (void *data_, void *hint_);

ZMQ_EXPORT int zmq_msg_init (zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_init_size (zmq_msg_t *msg_, size_t size_);
/* Zero-copy: the message takes `data_` and calls `ffn_(data_, hint_)` when done with it
   (`ffn_` NULL: the buffer is constant and never freed). */
ZMQ_EXPORT int zmq_msg_init_data (zmq_msg_t *msg_, void *data_, size_t size_, zmq_free_fn *ffn_,
                                  void *hint_);
ZMQ_EXPORT int zmq_msg_send (zmq_msg_t *msg_, void *s_, int flags_);
ZMQ_EXPORT int zmq_msg_recv (zmq_msg_t *msg_, void *s_, int flags_);
ZMQ_EXPORT int zmq_msg_close (zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_move (zmq_msg_t *dest_, zmq_msg_t *src_);
ZMQ_EXPORT int zmq_msg_copy (zmq_msg_t *dest_, zmq_msg_t *src_);
ZMQ_EXPORT void *zmq_msg_data (zmq_msg_t *msg_);
ZMQ_EXPORT size_t zmq_msg_size (const zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_more (const zmq_msg_t *msg_);
ZMQ_EXPORT int zmq_msg_get (const zmq_msg_t *msg_, int property_);
ZMQ_EXPORT int zmq_msg_set (zmq_msg_t *msg_, int property_, int optval_);
ZMQ_EXPORT const char *zmq_msg_gets (const zmq_msg_t *msg_, const char *property_);

/* Message properties (zmq_msg_get). */
#define ZMQ_MORE 1
#define ZMQ_SRCFD 2 /* deprecated */
#define ZMQ_SHARED 3

/* ---------------------------------------------------------------------------------------- */
/* Sockets                                                                                    */
/* ---------------------------------------------------------------------------------------- */

/* Socket types. */
#define ZMQ_PAIR 0
#define ZMQ_PUB 1
#define ZMQ_SUB 2
#define ZMQ_REQ 3
#define ZMQ_REP 4
#define ZMQ_DEALER 5
#define ZMQ_ROUTER 6
#define ZMQ_PULL 7
#define ZMQ_PUSH 8
#define ZMQ_XPUB 9
#define ZMQ_XSUB 10
#define ZMQ_STREAM 11
#define ZMQ_XREQ ZMQ_DEALER /* deprecated */
#define ZMQ_XREP ZMQ_ROUTER /* deprecated */

/* Socket options (zmq_setsockopt / zmq_getsockopt). */
#define ZMQ_AFFINITY 4
#define ZMQ_ROUTING_ID 5
#define ZMQ_SUBSCRIBE 6
#define ZMQ_UNSUBSCRIBE 7
#define ZMQ_RATE 8
#define ZMQ_RECOVERY_IVL 9
#define ZMQ_SNDBUF 11
#define ZMQ_RCVBUF 12
#define ZMQ_RCVMORE 13
#define ZMQ_FD 14
#define ZMQ_EVENTS 15
#define ZMQ_TYPE 16
#define ZMQ_LINGER 17
#define ZMQ_RECONNECT_IVL 18
#define ZMQ_BACKLOG 19
#define ZMQ_RECONNECT_IVL_MAX 21
#define ZMQ_MAXMSGSIZE 22
#define ZMQ_SNDHWM 23
#define ZMQ_RCVHWM 24
#define ZMQ_MULTICAST_HOPS 25
#define ZMQ_RCVTIMEO 27
#define ZMQ_SNDTIMEO 28
#define ZMQ_LAST_ENDPOINT 32
#define ZMQ_ROUTER_MANDATORY 33
#define ZMQ_TCP_KEEPALIVE 34
#define ZMQ_TCP_KEEPALIVE_CNT 35
#define ZMQ_TCP_KEEPALIVE_IDLE 36
#define ZMQ_TCP_KEEPALIVE_INTVL 37
#define ZMQ_IMMEDIATE 39
#define ZMQ_XPUB_VERBOSE 40
#define ZMQ_ROUTER_RAW 41
#define ZMQ_IPV6 42
#define ZMQ_MECHANISM 43
#define ZMQ_PLAIN_SERVER 44
#define ZMQ_PLAIN_USERNAME 45
#define ZMQ_PLAIN_PASSWORD 46
#define ZMQ_CURVE_SERVER 47
#define ZMQ_CURVE_PUBLICKEY 48
#define ZMQ_CURVE_SECRETKEY 49
#define ZMQ_CURVE_SERVERKEY 50
#define ZMQ_PROBE_ROUTER 51
#define ZMQ_REQ_CORRELATE 52
#define ZMQ_REQ_RELAXED 53
#define ZMQ_CONFLATE 54
#define ZMQ_ZAP_DOMAIN 55
#define ZMQ_ROUTER_HANDOVER 56
#define ZMQ_TOS 57
#define ZMQ_CONNECT_ROUTING_ID 61
#define ZMQ_GSSAPI_SERVER 62
#define ZMQ_GSSAPI_PRINCIPAL 63
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL 64
#define ZMQ_GSSAPI_PLAINTEXT 65
#define ZMQ_HANDSHAKE_IVL 66
#define ZMQ_SOCKS_PROXY 68
#define ZMQ_XPUB_NODROP 69
#define ZMQ_BLOCKY 70
#define ZMQ_XPUB_MANUAL 71
#define ZMQ_XPUB_WELCOME_MSG 72
#define ZMQ_STREAM_NOTIFY 73
#define ZMQ_INVERT_MATCHING 74
#define ZMQ_HEARTBEAT_IVL 75
#define ZMQ_HEARTBEAT_TTL 76
#define ZMQ_HEARTBEAT_TIMEOUT 77
#define ZMQ_XPUB_VERBOSER 78
#define ZMQ_CONNECT_TIMEOUT 79
#define ZMQ_TCP_MAXRT 80
#define ZMQ_THREAD_SAFE 81
#define ZMQ_MULTICAST_MAXTPDU 84
#define ZMQ_VMCI_BUFFER_SIZE 85
#define ZMQ_VMCI_BUFFER_MIN_SIZE 86
#define ZMQ_VMCI_BUFFER_MAX_SIZE 87
#define ZMQ_VMCI_CONNECT_TIMEOUT 88
#define ZMQ_USE_FD 89
#define ZMQ_GSSAPI_PRINCIPAL_NAMETYPE 90
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE 91
#define ZMQ_BINDTODEVICE 92

/* Deprecated option names and options. */
#define ZMQ_IDENTITY ZMQ_ROUTING_ID
#define ZMQ_CONNECT_RID ZMQ_CONNECT_ROUTING_ID
#define ZMQ_TCP_ACCEPT_FILTER 38
#define ZMQ_IPC_FILTER_PID 58
#define ZMQ_IPC_FILTER_UID 59
#define ZMQ_IPC_FILTER_GID 60
#define ZMQ_IPV4ONLY 31
#define ZMQ_DELAY_ATTACH_ON_CONNECT ZMQ_IMMEDIATE
#define ZMQ_NOBLOCK ZMQ_DONTWAIT
#define ZMQ_FAIL_UNROUTABLE ZMQ_ROUTER_MANDATORY
#define ZMQ_ROUTER_BEHAVIOR ZMQ_ROUTER_MANDATORY

/* Send/receive flags. */
#define ZMQ_DONTWAIT 1
#define ZMQ_SNDMORE 2

/* Security mechanisms (ZMQ_MECHANISM). */
#define ZMQ_NULL 0
#define ZMQ_PLAIN 1
#define ZMQ_CURVE 2
#define ZMQ_GSSAPI 3

/* GSSAPI principal name types. */
#define ZMQ_GSSAPI_NT_HOSTBASED 0
#define ZMQ_GSSAPI_NT_USER_NAME 1
#define ZMQ_GSSAPI_NT_KRB5_PRINCIPAL 2

/* RADIO/DISH. */
#define ZMQ_GROUP_MAX_LENGTH 255

ZMQ_EXPORT void *zmq_socket (void *, int type_);
ZMQ_EXPORT int zmq_close (void *s_);
ZMQ_EXPORT int zmq_setsockopt (void *s_, int option_, const void *optval_, size_t optvallen_);
ZMQ_EXPORT int zmq_getsockopt (void *s_, int option_, void *optval_, size_t *optvallen_);
ZMQ_EXPORT int zmq_bind (void *s_, const char *addr_);
ZMQ_EXPORT int zmq_connect (void *s_, const char *addr_);
ZMQ_EXPORT int zmq_unbind (void *s_, const char *addr_);
ZMQ_EXPORT int zmq_disconnect (void *s_, const char *addr_);
/* Copies `len_` bytes into a new frame. Returns len_. */
ZMQ_EXPORT int zmq_send (void *s_, const void *buf_, size_t len_, int flags_);
/* Sends a buffer that stays constant for the life of the program, without copying it. */
ZMQ_EXPORT int zmq_send_const (void *s_, const void *buf_, size_t len_, int flags_);
/* Copies at most len_ bytes; returns the full frame size (which may exceed len_). */
ZMQ_EXPORT int zmq_recv (void *s_, void *buf_, size_t len_, int flags_);

/* ---------------------------------------------------------------------------------------- */
/* Socket monitoring                                                                          */
/* ---------------------------------------------------------------------------------------- */

#define ZMQ_EVENT_CONNECTED 0x0001
#define ZMQ_EVENT_CONNECT_DELAYED 0x0002
#define ZMQ_EVENT_CONNECT_RETRIED 0x0004
#define ZMQ_EVENT_LISTENING 0x0008
#define ZMQ_EVENT_BIND_FAILED 0x0010
#define ZMQ_EVENT_ACCEPTED 0x0020
#define ZMQ_EVENT_ACCEPT_FAILED 0x0040
#define ZMQ_EVENT_CLOSED 0x0080
#define ZMQ_EVENT_CLOSE_FAILED 0x0100
#define ZMQ_EVENT_DISCONNECTED 0x0200
#define ZMQ_EVENT_MONITOR_STOPPED 0x0400
#define ZMQ_EVENT_ALL 0xFFFF
#define ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL 0x0800
#define ZMQ_EVENT_HANDSHAKE_SUCCEEDED 0x1000
#define ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL 0x2000
#define ZMQ_EVENT_HANDSHAKE_FAILED_AUTH 0x4000

/* Values of ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL. */
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED 0x10000000
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND 0x10000001
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE 0x10000002
#define ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE 0x10000003
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED 0x10000011
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE 0x10000012
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO 0x10000013
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE 0x10000014
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR 0x10000015
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY 0x10000016
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME 0x10000017
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA 0x10000018
#define ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC 0x11000001
#define ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH 0x11000002
#define ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED 0x20000000
#define ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY 0x20000001
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID 0x20000002
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION 0x20000003
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE 0x20000004
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA 0x20000005
#define ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED 0x30000000

ZMQ_EXPORT int zmq_socket_monitor (void *s_, const char *addr_, int events_);
/* oxmq: zmq_socket_monitor_versioned's event version 3 is version 2 followed by one more
   frame, the peer's routing id (empty when unknown). */
#define ZMQ_EVENT_VERSION_OXMQ_ROUTING_ID 3

/* ---------------------------------------------------------------------------------------- */
/* Polling                                                                                    */
/* ---------------------------------------------------------------------------------------- */

typedef int zmq_fd_t;

#define ZMQ_POLLIN 1
#define ZMQ_POLLOUT 2
#define ZMQ_POLLERR 4
#define ZMQ_POLLPRI 8

/* One item of zmq_poll: a socket, or (socket NULL) a file descriptor. */
typedef struct zmq_pollitem_t
{
    void *socket;
    zmq_fd_t fd;
    short events;
    short revents;
} zmq_pollitem_t;

#define ZMQ_POLLITEMS_DFLT 16

/* Waits up to timeout_ milliseconds (-1: forever) for any item's events; returns how many
   items have revents set. */
ZMQ_EXPORT int zmq_poll (zmq_pollitem_t *items_, int nitems_, long timeout_);

/* ---------------------------------------------------------------------------------------- */
/* Proxy                                                                                      */
/* ---------------------------------------------------------------------------------------- */

ZMQ_EXPORT int zmq_proxy (void *frontend_, void *backend_, void *capture_);
/* As zmq_proxy, with PAUSE / RESUME / TERMINATE / STATISTICS commands on control_. */
ZMQ_EXPORT int zmq_proxy_steerable (void *frontend_, void *backend_, void *capture_,
                                    void *control_);

/* ---------------------------------------------------------------------------------------- */
/* Capabilities: zmq_has("ipc"), "curve", "ws", "wss" and "tls" (oxmq's ZMTP over TLS 1.3)  */
/* are 1; "plain" (like libzmq, which does not list it), "gssapi", "pgm", "tipc", "norm",    */
/* "vmci" are 0; "draft" is 1 only with ZMQ_BUILD_DRAFT_API defined (see the draft section). */
/* ws://, wss:// and tls:// take their TLS from ZMQ_WSS_KEY_PEM ... ZMQ_WSS_TRUST_SYSTEM;   */
/* a TLS peer's verified certificate subject is the message property "TLS-Peer-Subject".    */
/* ---------------------------------------------------------------------------------------- */

#define ZMQ_HAS_CAPABILITIES 1
ZMQ_EXPORT int zmq_has (const char *capability_);

/* Deprecated device names and functions. */
#define ZMQ_STREAMER 1
#define ZMQ_FORWARDER 2
#define ZMQ_QUEUE 3

ZMQ_EXPORT int zmq_device (int type_, void *frontend_, void *backend_);
ZMQ_EXPORT int zmq_sendmsg (void *s_, zmq_msg_t *msg_, int flags_);
ZMQ_EXPORT int zmq_recvmsg (void *s_, zmq_msg_t *msg_, int flags_);
struct iovec;
ZMQ_EXPORT int zmq_sendiov (void *s_, struct iovec *iov_, size_t count_, int flags_);
ZMQ_EXPORT int zmq_recviov (void *s_, struct iovec *iov_, size_t *count_, int flags_);

/* ---------------------------------------------------------------------------------------- */
/* Z85 and CURVE keys                                                                         */
/* ---------------------------------------------------------------------------------------- */

/* dest_ holds size_ * 5 / 4 + 1 bytes; size_ is a multiple of 4. NULL (EINVAL) otherwise. */
ZMQ_EXPORT char *zmq_z85_encode (char *dest_, const uint8_t *data_, size_t size_);
/* dest_ holds strlen (string_) * 4 / 5 bytes; the length is a multiple of 5. */
ZMQ_EXPORT uint8_t *zmq_z85_decode (uint8_t *dest_, const char *string_);
/* Keys are 40 Z85 characters plus NUL (41-byte buffers). */
ZMQ_EXPORT int zmq_curve_keypair (char *z85_public_key_, char *z85_secret_key_);
ZMQ_EXPORT int zmq_curve_public (char *z85_public_key_, const char *z85_secret_key_);

/* ---------------------------------------------------------------------------------------- */
/* Atomic counters                                                                            */
/* ---------------------------------------------------------------------------------------- */

ZMQ_EXPORT void *zmq_atomic_counter_new (void);
ZMQ_EXPORT void zmq_atomic_counter_set (void *counter_, int value_);
/* Returns the value before the increment. */
ZMQ_EXPORT int zmq_atomic_counter_inc (void *counter_);
/* Returns 0 when the counter reached zero, 1 otherwise. */
ZMQ_EXPORT int zmq_atomic_counter_dec (void *counter_);
ZMQ_EXPORT int zmq_atomic_counter_value (void *counter_);
ZMQ_EXPORT void zmq_atomic_counter_destroy (void **counter_p_);

/* ---------------------------------------------------------------------------------------- */
/* Timers                                                                                     */
/* ---------------------------------------------------------------------------------------- */

#define ZMQ_HAVE_TIMERS

typedef void (zmq_timer_fn) (int timer_id, void *arg);

ZMQ_EXPORT void *zmq_timers_new (void);
ZMQ_EXPORT int zmq_timers_destroy (void **timers_p);
ZMQ_EXPORT int zmq_timers_add (void *timers, size_t interval, zmq_timer_fn handler, void *arg);
ZMQ_EXPORT int zmq_timers_cancel (void *timers, int timer_id);
ZMQ_EXPORT int zmq_timers_set_interval (void *timers, int timer_id, size_t interval);
ZMQ_EXPORT int zmq_timers_reset (void *timers, int timer_id);
/* Milliseconds until the next timer is due, 0 if one is, -1 if there is none. */
ZMQ_EXPORT long zmq_timers_timeout (void *timers);
ZMQ_EXPORT int zmq_timers_execute (void *timers);

/* ---------------------------------------------------------------------------------------- */
/* Helpers for the perf tools and tests                                                       */
/* ---------------------------------------------------------------------------------------- */

/* Stopwatch in microseconds; zmq_stopwatch_stop frees the watch. */
ZMQ_EXPORT void *zmq_stopwatch_start (void);
ZMQ_EXPORT unsigned long zmq_stopwatch_intermediate (void *watch_);
ZMQ_EXPORT unsigned long zmq_stopwatch_stop (void *watch_);
ZMQ_EXPORT void zmq_sleep (int seconds_);

typedef void (zmq_thread_fn) (void *);
ZMQ_EXPORT void *zmq_threadstart (zmq_thread_fn *func_, void *arg_);
/* Joins the thread and frees its handle. */
ZMQ_EXPORT void zmq_threadclose (void *thread_);

/* ======================================================================================== */
/* oxmq extensions: not in libzmq. Test OXMQ_ZMQ_H before using them.                          */
/* ======================================================================================== */

/* Level-triggered readiness for ZMQ_FD. The value is an event mask: ZMQ_POLLIN, ZMQ_POLLOUT or
   both; 0 (the default) is libzmq's edge-triggered contract (after ZMQ_FD polls readable, read
   ZMQ_EVENTS and receive until EAGAIN). While set, ZMQ_FD is readable exactly while the socket
   can receive (ZMQ_POLLIN) or send (ZMQ_POLLOUT) without blocking, so a plain level-triggered
   select/poll/epoll loop may handle one message per wake-up. A peer event that brings no
   message (a connection, a disconnection) may leave it readable until the next call into the
   socket finds nothing; it never stays readable with nothing to do. zmq_poller_* uses this
   mode for the sockets it holds. The option number is far above libzmq's range. */
#define ZMQ_OXMQ_FD_LEVEL 0x4f580001

/* Microseconds a blocking receive keeps polling its connections before it sleeps, while the
   socket's recent waits were that short (a request/reply exchange): waking a sleeping thread
   costs tens of microseconds, more than a loopback round trip. An int, 0 (off) to 1000000.
   The default is 50, or the environment variable OXMQ_RECV_SPIN_US when set, and 0 on a
   machine with one CPU. */
#define ZMQ_OXMQ_RECV_SPIN 0x4f580002

/* Connects that follow DNS. An int, 0 (the default: libzmq's behaviour, a tcp connect to a
   host name connects to the first address it resolves to) or 1: a tcp connect to a host name
   made while it is set connects to every address the name resolves to, as one endpoint whose
   peers the socket's pattern spreads over (load balancing, fan-out, fair queuing), and
   follows the name: it is looked up again every ZMQ_OXMQ_DNS_IVL and whenever one of its
   connections is lost or retried. New addresses are connected; an address that left the name
   drains for ZMQ_LINGER (one interval if it is -1): PUSH, DEALER, REQ, CLIENT and SCATTER send
   it nothing new, what was queued for it is delivered and replies from it received; PUSH and
   SCATTER disconnect it once its queue is empty, the other types at the end of the period,
   when what is still queued is counted (oxmq_socket_stats_t.dropped_vanished). A lookup that
   gets no answer keeps the connections. zmq_disconnect with the endpoint as given ends them
   all. Endpoints naming an IP address, and connects through ZMQ_SOCKS_PROXY, are not
   affected. */
#define ZMQ_OXMQ_DNS_FOLLOW 0x4f580010

/* Milliseconds between two lookups of a followed name: an int, 100 to 86400000 (default
   30000), read at zmq_connect. */
#define ZMQ_OXMQ_DNS_IVL 0x4f580011

/* The socket's name in the metrics (oxmq_ctx_metrics, OXMQ_METRICS_ADDR): a string of at most
   64 letters, digits and _ - . : / (EINVAL otherwise); empty (the default) for none. */
#define ZMQ_OXMQ_NAME 0x4f580012

/* A socket's counters, all since the socket was created (see oxmq::SocketStats). */
typedef struct oxmq_socket_stats_t
{
    uint64_t msgs_in;            /* messages received by the application */
    uint64_t bytes_in;           /* their bytes (every frame's body) */
    uint64_t msgs_out;           /* messages sent by the application (dropped ones too) */
    uint64_t bytes_out;          /* their bytes */
    uint64_t dropped_hwm;        /* copies dropped at a peer's HWM (PUB/XPUB, ROUTER) */
    uint64_t dropped_no_route;   /* ROUTER: no peer with that routing id */
    uint64_t dropped_oversized;  /* frames over MAXMSGSIZE (the connection is dropped) */
    uint64_t peers;              /* peers connected now (tcp/ipc past handshake, inproc) */
    uint64_t connections;        /* tcp/ipc handshakes completed, ever */
    uint64_t reconnects;         /* of those, re-established by a connecting socket */
    uint64_t handshake_failures; /* tcp/ipc connections that failed the handshake */
    uint64_t wire_bytes_in;      /* bytes read from tcp/ipc, framing included */
    uint64_t wire_bytes_out;     /* bytes written to tcp/ipc, framing included */
    uint64_t dropped_malformed;  /* peer messages the socket type cannot take (multi-part to
                                    a single-part type, DISH without a group) */
    uint64_t dropped_unsendable; /* messages a udp engine could not send (RADIO over the
                                    datagram size, DGRAM to the other IP family, refused) */
    uint64_t dropped_disconnected; /* queued towards a peer that went away for good (an
                                      accepted connection that ended, an inproc peer that
                                      closed) before taking them */
    uint64_t dropped_vanished;   /* queued to or from an address that left a followed name
                                    (ZMQ_OXMQ_DNS_FOLLOW) when its drain period ended */
    uint64_t hwm_reached;        /* sends that found a peer's queue at its HWM (PUB, XPUB,
                                    RADIO, ROUTER drop then; PUSH, DEALER, REQ pass it over) */
    uint64_t protocol_errors;    /* connections dropped after the handshake for breaking the
                                    protocol */
} oxmq_socket_stats_t;

/* Fills at most size_ bytes of *stats_ (pass sizeof (oxmq_socket_stats_t); a smaller size from
   an older header gets the fields it knows). 0, or -1 with ENOTSOCK/EFAULT/EINVAL. */
ZMQ_EXPORT int oxmq_socket_stats (void *s_, oxmq_socket_stats_t *stats_, size_t size_);

/* One peer's queues. */
typedef struct oxmq_socket_peer_stats_t
{
    uint64_t queued_out; /* messages queued towards the peer, not yet taken by it */
    int64_t queued_in;   /* messages from the peer waiting to be received; -1: not known (inproc) */
} oxmq_socket_peer_stats_t;

/* Writes up to n_ peers into peers_ (may be NULL when n_ is 0); returns how many peers the
   socket has (which may exceed n_), or -1 with ENOTSOCK/EFAULT/EINVAL. */
ZMQ_EXPORT int oxmq_socket_peer_stats (void *s_, oxmq_socket_peer_stats_t *peers_, int n_);

/* Every socket of the context's counters in the Prometheus text format (version 0.0.4), as
   the /metrics endpoint that OXMQ_METRICS_ADDR=HOST:PORT in the environment makes the process
   serve: for applications that serve metrics themselves. Writes at most size_ bytes including
   a terminating NUL into buf_ (which may be NULL when size_ is 0) and returns the length of
   the whole text (excluding the NUL), as snprintf: a return value of size_ or more means the
   text was cut; call again with a larger buffer. Waits up to timeout_ms_ (0: not at all) for
   the sockets to publish fresh counts: a socket publishes them at its thread's next call into
   it, or at once while that thread waits in a blocking call or zmq_poll; one that has not is
   reported from its last publication (oxmq_socket_snapshot_age_seconds). A thread that owns
   sockets itself passes 0. -1 with EFAULT (bad context) or EINVAL (negative timeout). */
ZMQ_EXPORT int oxmq_ctx_metrics (void *context_, char *buf_, size_t size_, int timeout_ms_);

/* ---------------------------------------------------------------------------------------- */
/* Draft API (define ZMQ_BUILD_DRAFT_API to see it). The functions exist in the library       */
/* whether or not the macro is defined.                                                       */
/* ---------------------------------------------------------------------------------------- */

#ifdef ZMQ_BUILD_DRAFT_API

/* zmq_has ("draft") is 1 for a program built with the draft API enabled in this header, 0
   otherwise (a program built without it must not use the draft API, and checks this). */
ZMQ_EXPORT int oxmq_has_draft_api (const char *capability_);
#define zmq_has(capability_) oxmq_has_draft_api (capability_)

/* Draft socket types. DGRAM (not thread-safe, as libzmq's) binds one udp:// endpoint and
   sends and receives [address, body] messages: the address is the peer's "ip:port" (IPv6:
   "[ip]:port") followed by a NUL on receipt, the destination (NUL optional) on sending. It
   does not connect, nor use tcp, ipc or inproc (ENOCOMPATPROTO). */
#define ZMQ_SERVER 12
#define ZMQ_CLIENT 13
#define ZMQ_RADIO 14
#define ZMQ_DISH 15
#define ZMQ_GATHER 16
#define ZMQ_SCATTER 17
#define ZMQ_DGRAM 18
#define ZMQ_PEER 19
#define ZMQ_CHANNEL 20

/* Draft socket options. */
#define ZMQ_ZAP_ENFORCE_DOMAIN 93
#define ZMQ_LOOPBACK_FASTPATH 94
#define ZMQ_METADATA 95
#define ZMQ_MULTICAST_LOOP 96
#define ZMQ_ROUTER_NOTIFY 97
#define ZMQ_XPUB_MANUAL_LAST_VALUE 98
#define ZMQ_SOCKS_USERNAME 99
#define ZMQ_SOCKS_PASSWORD 100
#define ZMQ_IN_BATCH_SIZE 101
#define ZMQ_OUT_BATCH_SIZE 102
#define ZMQ_WSS_KEY_PEM 103
#define ZMQ_WSS_CERT_PEM 104
#define ZMQ_WSS_TRUST_PEM 105
#define ZMQ_WSS_HOSTNAME 106
#define ZMQ_WSS_TRUST_SYSTEM 107
#define ZMQ_ONLY_FIRST_SUBSCRIBE 108
#define ZMQ_RECONNECT_STOP 109
#define ZMQ_HELLO_MSG 110
#define ZMQ_DISCONNECT_MSG 111
#define ZMQ_PRIORITY 112
#define ZMQ_BUSY_POLL 113

#define ZMQ_RECONNECT_STOP_CONN_REFUSED 0x1
#define ZMQ_RECONNECT_STOP_HANDSHAKE_FAILED 0x2
#define ZMQ_RECONNECT_STOP_AFTER_DISCONNECT 0x4

/* Draft context options and functions. */
#define ZMQ_ZERO_COPY_RECV 10
ZMQ_EXPORT int zmq_ctx_set_ext (void *context_, int option_, const void *optval_,
                                size_t optvallen_);
ZMQ_EXPORT int zmq_ctx_get_ext (void *context_, int option_, void *optval_, size_t *optvallen_);

/* Draft socket functions. */
ZMQ_EXPORT int zmq_join (void *s, const char *group);
ZMQ_EXPORT int zmq_leave (void *s, const char *group);
ZMQ_EXPORT uint32_t zmq_connect_peer (void *s_, const char *addr_);

/* Draft message functions. */
ZMQ_EXPORT int zmq_msg_set_routing_id (zmq_msg_t *msg, uint32_t routing_id);
ZMQ_EXPORT uint32_t zmq_msg_routing_id (zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_set_group (zmq_msg_t *msg, const char *group);
ZMQ_EXPORT const char *zmq_msg_group (zmq_msg_t *msg);
ZMQ_EXPORT int zmq_msg_init_buffer (zmq_msg_t *msg_, const void *buf_, size_t size_);

/* Message property names (zmq_msg_gets). */
#define ZMQ_MSG_PROPERTY_ROUTING_ID "Routing-Id"
#define ZMQ_MSG_PROPERTY_SOCKET_TYPE "Socket-Type"
#define ZMQ_MSG_PROPERTY_USER_ID "User-Id"
#define ZMQ_MSG_PROPERTY_PEER_ADDRESS "Peer-Address"

/* ZMQ_ROUTER_NOTIFY values. */
#define ZMQ_NOTIFY_CONNECT 1
#define ZMQ_NOTIFY_DISCONNECT 2

/* The poller: a set of sockets and file descriptors waited on together. */
#define ZMQ_HAVE_POLLER

typedef struct zmq_poller_event_t
{
    void *socket;
    zmq_fd_t fd;
    void *user_data;
    short events;
} zmq_poller_event_t;

ZMQ_EXPORT void *zmq_poller_new (void);
ZMQ_EXPORT int zmq_poller_destroy (void **poller_p);
ZMQ_EXPORT int zmq_poller_size (void *poller);
ZMQ_EXPORT int zmq_poller_add (void *poller, void *socket, void *user_data, short events);
ZMQ_EXPORT int zmq_poller_modify (void *poller, void *socket, short events);
ZMQ_EXPORT int zmq_poller_remove (void *poller, void *socket);
/* 0 with one event, or -1 with EAGAIN on timeout. */
ZMQ_EXPORT int zmq_poller_wait (void *poller, zmq_poller_event_t *event, long timeout);
/* The number of events written (at most n_events), or -1 with EAGAIN on timeout. */
ZMQ_EXPORT int zmq_poller_wait_all (void *poller, zmq_poller_event_t *events, int n_events,
                                    long timeout);
/* EINVAL: oxmq's poller has no descriptor of its own (libzmq has one only while thread-safe
   sockets are registered; oxmq does not provide it yet, even for its thread-safe draft types). */
ZMQ_EXPORT int zmq_poller_fd (void *poller, zmq_fd_t *fd);
ZMQ_EXPORT int zmq_poller_add_fd (void *poller, zmq_fd_t fd, void *user_data, short events);
ZMQ_EXPORT int zmq_poller_modify_fd (void *poller, zmq_fd_t fd, short events);
ZMQ_EXPORT int zmq_poller_remove_fd (void *poller, zmq_fd_t fd);

ZMQ_EXPORT int zmq_socket_get_peer_state (void *socket, const void *routing_id,
                                          size_t routing_id_size);

/* Draft monitoring. */
#define ZMQ_EVENT_PIPES_STATS 0x10000
#define ZMQ_CURRENT_EVENT_VERSION 1
#define ZMQ_CURRENT_EVENT_VERSION_DRAFT 2
#define ZMQ_EVENT_ALL_V1 ZMQ_EVENT_ALL
#define ZMQ_EVENT_ALL_V2 ZMQ_EVENT_ALL_V1 | ZMQ_EVENT_PIPES_STATS

ZMQ_EXPORT int zmq_socket_monitor_versioned (void *s_, const char *addr_, uint64_t events_,
                                             int event_version_, int type_);
ZMQ_EXPORT int zmq_socket_monitor_pipes_stats (void *s);

#endif /* ZMQ_BUILD_DRAFT_API */

#undef ZMQ_EXPORT

#ifdef __cplusplus
}
#endif

#endif /* __ZMQ_H_INCLUDED__ */
