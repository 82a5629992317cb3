/* router_srv <bind-to> <peers> <client-processes> <rounds>
   One ROUTER serving many DEALERs (dealer_cli, in other processes). Each DEALER's routing id
   is its index (put_peer_id) and it first sends "hello": the ROUTER counts distinct peers until all
   <peers> are there (time to accept them all; RSS before and after, so RSS per connection).
   Then it sends "go" to every peer and echoes requests until <peers> x <rounds> have been
   answered (round trips per second, CPU per round trip), and ends when each client process
   has sent "done". ROUTER_MANDATORY: a reply to a peer that is not there is an error. */
#include "scale_util.h"

int main (int argc, char *argv[])
{
    if (argc != 5) {
        fprintf (stderr, "usage: router_srv <bind-to> <peers> <client-processes> <rounds>\n");
        return 1;
    }
    long peers = parse_count (argv[2], "peers");
    long procs = parse_count (argv[3], "client-processes");
    long rounds = parse_count (argv[4], "rounds");
    proc_init ();
    void *ctx = zctx (4);
    void *r = zsock (ctx, ZMQ_ROUTER);
    zsetint (r, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    zsetint (r, ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
    zsetint (r, ZMQ_LINGER, 0, "ZMQ_LINGER");
    zsetint (r, ZMQ_RCVTIMEO, 300000, "ZMQ_RCVTIMEO");
    zsetint (r, ZMQ_SNDTIMEO, 60000, "ZMQ_SNDTIMEO");
    zmq_msg_t id, body;
    zmq_msg_init (&id);
    zmq_msg_init (&body);
    /* warm the socket's code paths before measuring memory: one call into it */
    int events;
    size_t elen = sizeof events;
    zmq_getsockopt (r, ZMQ_EVENTS, &events, &elen);
    long rss0 = rss_kb ();
    long fds0 = open_fds ();
    zbind_print (r, argv[1], "endpoint");
    double t0 = now_us ();

    char *seen = calloc ((size_t) peers, 1);
    long distinct = 0, errors = 0;
    while (distinct < peers) {
        if (zmq_msg_recv (&id, r, 0) < 0 || zmq_msg_recv (&body, r, 0) < 0)
            die ("waiting for hellos", zmq_strerror (zmq_errno ()));
        int64_t k = get_peer_id (zmq_msg_data (&id), zmq_msg_size (&id));
        if (k < 0 || k >= peers || zmq_msg_size (&body) != 5 || memcmp (zmq_msg_data (&body), "hello", 5)) {
            errors++;
            continue;
        }
        if (!seen[k]) {
            seen[k] = 1;
            distinct++;
        }
    }
    double t_accepted = now_us ();
    zmq_getsockopt (r, ZMQ_EVENTS, &events, &elen);
    long rss1 = rss_kb ();
    long fds1 = open_fds ();

    long long cpu0 = cpu_us ();
    double t_go = now_us ();
    for (uint32_t k = 0; k < (uint32_t) peers; k++) {
        unsigned char rid[4];
        put_peer_id (rid, k);
        zcheck (zmq_send (r, rid, 4, ZMQ_SNDMORE), "zmq_send id");
        zcheck (zmq_send (r, "go", 2, 0), "zmq_send go");
    }
    long answered = 0, dones = 0;
    double t_rt = 0;
    long long cpu_rt = 0;
    while (dones < procs) {
        if (zmq_msg_recv (&id, r, 0) < 0 || zmq_msg_recv (&body, r, 0) < 0)
            die ("serving", zmq_strerror (zmq_errno ()));
        if (zmq_msg_size (&body) >= 4 && memcmp (zmq_msg_data (&body), "done", 4) == 0) {
            char txt[32] = {0};
            memcpy (txt, (char *) zmq_msg_data (&body) + 4,
                    zmq_msg_size (&body) - 4 < sizeof txt - 1 ? zmq_msg_size (&body) - 4 : sizeof txt - 1);
            errors += strtol (txt, NULL, 10);
            dones++;
            continue;
        }
        if (zmq_msg_send (&id, r, ZMQ_SNDMORE) < 0 || zmq_msg_send (&body, r, 0) < 0) {
            errors++;
            continue;
        }
        if (++answered == peers * rounds) {
            t_rt = now_us ();
            cpu_rt = cpu_us () - cpu0;
        }
    }
    if (answered != peers * rounds)
        errors++;
    result ("peers=%ld rounds=%ld accept_us=%.0f rss_before_kb=%ld rss_after_kb=%ld fds_before=%ld "
            "fds_after=%ld roundtrips=%ld rt_us=%.0f cpu_us=%lld maxrss_kb=%ld errors=%ld",
            peers, rounds, t_accepted - t0, rss0, rss1, fds0, fds1, answered, t_rt - t_go, cpu_rt,
            maxrss_kb (), errors);
    zmq_msg_close (&id);
    zmq_msg_close (&body);
    zmq_close (r);
    zmq_ctx_term (ctx);
    return errors ? 1 : 0;
}
