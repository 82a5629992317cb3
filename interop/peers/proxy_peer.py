#!/usr/bin/env python3
"""libzmq's XSUB/XPUB forwarder (zmq.proxy), for oxmq publishers and subscribers to meet in.

Usage: proxy_peer.py XSUB_ENDPOINT XPUB_ENDPOINT [HARD_TIMEOUT_S]

Binds an XSUB (publishers connect) and an XPUB (subscribers connect), prints one line
"ok XSUB_LAST_ENDPOINT XPUB_LAST_ENDPOINT", then forwards until killed or HARD_TIMEOUT_S
(default 60) passes.
"""

import signal
import sys

import zmq


def main(argv):
    signal.alarm(int(argv[2]) if len(argv) > 2 else 60)
    ctx = zmq.Context()
    xsub = ctx.socket(zmq.XSUB)
    xpub = ctx.socket(zmq.XPUB)
    for s in (xsub, xpub):
        s.setsockopt(zmq.LINGER, 0)
    xsub.bind(argv[0])
    xpub.bind(argv[1])
    sys.stdout.write("ok %s %s\n" % (xsub.getsockopt_string(zmq.LAST_ENDPOINT),
                                     xpub.getsockopt_string(zmq.LAST_ENDPOINT)))
    sys.stdout.flush()
    zmq.proxy(xsub, xpub)


if __name__ == "__main__":
    main(sys.argv[1:])
