"""A libzmq peer for the C# interop tests (pyzmq, which bundles libzmq 4.3.5).

Modes (every wait bounded; exit status 0 only if the exchange went as expected):
  req ENDPOINT                   REQ: device commands to a C# REP, prints each reply
  curve-req ENDPOINT SERVERKEY   the same over CURVE (a fresh client key pair)
  pull-bind COUNT                binds a PULL (a log collector), prints its endpoint, then
                                 "got COUNT" after receiving COUNT lines and "END"
  pub-bind                       binds a PUB, prints its endpoint, publishes hardware and audio
                                 events every 2 ms until stdin closes
"""
import sys
import threading

import zmq

TIMEOUT_MS = 15000


def out(line):
    print(line, flush=True)


def main():
    mode = sys.argv[1]
    ctx = zmq.Context()
    if mode in ("req", "curve-req"):
        s = ctx.socket(zmq.REQ)
        if mode == "curve-req":
            pub, sec = zmq.curve_keypair()
            s.curve_serverkey = sys.argv[3].encode()
            s.curve_publickey = pub
            s.curve_secretkey = sec
        s.rcvtimeo = TIMEOUT_MS
        s.linger = 0
        s.connect(sys.argv[2])
        for req in ("open serial port /dev/ttyUSB0 115200", "play audio chime.wav"):
            s.send_string(req)
            out(s.recv_string())
    elif mode == "pull-bind":
        count = int(sys.argv[2])
        s = ctx.socket(zmq.PULL)
        s.rcvtimeo = TIMEOUT_MS
        s.bind("tcp://127.0.0.1:*")
        out(s.getsockopt_string(zmq.LAST_ENDPOINT))
        got = 0
        while True:
            line = s.recv_string()
            if line == "END":
                break
            expect = "device-py-test %d WARN fan speed low" % got
            if line != expect:
                out("unexpected %r, wanted %r" % (line, expect))
                return 1
            got += 1
        out("got %d" % got)
        return 0 if got == count else 1
    elif mode == "pub-bind":
        s = ctx.socket(zmq.PUB)
        s.linger = 0
        s.bind("tcp://127.0.0.1:*")
        out(s.getsockopt_string(zmq.LAST_ENDPOINT))
        stop = threading.Event()
        threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
        n = 0
        while not stop.wait(0.002) and n < 10000:
            s.send_multipart([b"hw/button/%d" % (n % 4), b"pressed %d" % n])
            s.send_multipart([b"audio/volume", b"%d" % (n % 10)])
            n += 1
    else:
        out("unknown mode " + mode)
        return 2
    s.close()
    ctx.term()
    return 0


if __name__ == "__main__":
    sys.exit(main())
