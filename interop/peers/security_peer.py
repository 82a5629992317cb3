#!/usr/bin/env python3
"""libzmq's CURVE/Z85 helpers (through pyzmq), one call per process, for oxmq's security tests.

Usage: security_peer.py COMMAND ARGS...   (prints one line: "ok ..." or "err ...")

  keypair                 -> ok PUBLIC_Z85 SECRET_Z85      (zmq_curve_keypair)
  public SECRET_Z85       -> ok PUBLIC_Z85                 (zmq_curve_public)
  z85encode HEX           -> ok TEXT                       (zmq_z85_encode)
  z85decode TEXT          -> ok HEX                        (zmq_z85_decode)
  has MECHANISM           -> ok 1|0                        (zmq_has)
  plain-echo bind|connect EP USER PASS IDLE_MS
                          a PAIR PLAIN server whose ZAP handler (pyzmq's ThreadAuthenticator)
                          accepts only USER/PASS; prints "ok LAST_ENDPOINT" once bound or
                          connected, echoes every message until none arrives for IDLE_MS, then
                          prints "ok ECHOED". On the first message it prints "user USER_ID",
                          the User-Id libzmq attached to it (zmq_msg_gets). libzmq 4.3.5's PLAIN server refuses every client
                          when no ZAP handler is bound, so this is how PLAIN clients are tested.

The sockets themselves are driven by peer.py, whose setint/setbytes commands set the security
options (PLAIN_SERVER, PLAIN_USERNAME, CURVE_SERVER, CURVE_SECRETKEY, ...).
"""

import signal
import sys

import zmq
from zmq.utils import z85


def plain_echo(mode, endpoint, user, password, idle):
    from zmq.auth.thread import ThreadAuthenticator

    ctx = zmq.Context()
    auth = ThreadAuthenticator(ctx)
    auth.start()
    auth.configure_plain(domain="*", passwords={user: password})
    sock = ctx.socket(zmq.PAIR)
    sock.setsockopt(zmq.LINGER, 1000)
    sock.setsockopt(zmq.PLAIN_SERVER, 1)
    if mode == "bind":
        sock.bind(endpoint)
        print("ok " + sock.getsockopt_string(zmq.LAST_ENDPOINT), flush=True)
    else:
        sock.connect(endpoint)
        print("ok " + endpoint, flush=True)
    n = 0
    while sock.poll(int(idle), zmq.POLLIN):
        frames = sock.recv_multipart(copy=False)
        if n == 0:
            print("user " + frames[0].get("User-Id"), flush=True)
        sock.send_multipart(frames)
        n += 1
    print("ok %d" % n, flush=True)
    sock.close()
    auth.stop()
    ctx.term()
    return 0


def main(argv):
    signal.alarm(30)
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "keypair":
            pub, sec = zmq.curve_keypair()
            print("ok %s %s" % (pub.decode(), sec.decode()))
        elif cmd == "public":
            print("ok " + zmq.curve_public(args[0].encode()).decode())
        elif cmd == "z85encode":
            print("ok " + z85.encode(bytes.fromhex(args[0])).decode())
        elif cmd == "z85decode":
            print("ok " + z85.decode(args[0].encode()).hex())
        elif cmd == "plain-echo":
            return plain_echo(*args)
        elif cmd == "has":
            print("ok %d" % int(zmq.has(args[0])))
        else:
            print("err EINVAL unknown command " + cmd)
            return 2
    except Exception as e:  # report, do not hide
        print("err FAIL %s" % str(e).replace("\n", " "))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
