/* The CURVE switch of the ZeroMQ perf tools. As in libzmq's perf tools, an optional last
   argument <enable_curve> turns CURVE on when it is a non-zero number: the binding side
   (local_thr, local_lat) is the CURVE server, the connecting side (remote_thr, remote_lat) the
   client. The keys are fixed test pairs (the examples of zmq_curve(7)), which is fine for a
   benchmark and lets the two sides run as separate processes without exchanging keys. */
#ifndef OXMQ_PERF_CURVE_H
#define OXMQ_PERF_CURVE_H

#include <zmq.h>
#include "perf_util.h"

static const char perf_server_public[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char perf_server_secret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char perf_client_public[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char perf_client_secret[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

/* argv[4], when present, is <enable_curve>. */
static inline int curve_arg (int argc, char *argv[])
{
    return argc == 5 && parse_count (argv[4], "enable_curve") != 0;
}

static inline void curve_set (void *s, int option, const char *key)
{
    if (zmq_setsockopt (s, option, key, strlen (key)) != 0) {
        fprintf (stderr, "zmq_has (\"curve\") = %d\n", zmq_has ("curve"));
        die ("zmq_setsockopt", zmq_strerror (zmq_errno ()));
    }
}

/* Makes `s` a CURVE server (binding side) or client (connecting side). Call before bind or
   connect. */
static inline void curve_setup (void *s, int server)
{
    if (server) {
        int on = 1;
        if (zmq_setsockopt (s, ZMQ_CURVE_SERVER, &on, sizeof on) != 0)
            die ("zmq_setsockopt", zmq_strerror (zmq_errno ()));
        curve_set (s, ZMQ_CURVE_SECRETKEY, perf_server_secret);
    } else {
        curve_set (s, ZMQ_CURVE_SERVERKEY, perf_server_public);
        curve_set (s, ZMQ_CURVE_PUBLICKEY, perf_client_public);
        curve_set (s, ZMQ_CURVE_SECRETKEY, perf_client_secret);
    }
}

#endif
