#!/usr/bin/env python3
"""A libzmq socket (through pyzmq) driven line by line over stdin, for oxmq's interop tests.

Usage: peer.py SOCKTYPE [HARD_TIMEOUT_S]

The process exits by itself after HARD_TIMEOUT_S (default 60) whatever happens, so a test that
forgets it cannot leave it behind. Commands, one per line; every command gets one reply line,
"ok ...", "msg ..." or "err NAME detail":

  bind EP                 -> ok LAST_ENDPOINT
  connect EP | unbind EP | disconnect EP -> ok
  setint OPT VALUE        (OPT by zmq name, e.g. ROUTING_ID is setbytes) -> ok
  setbytes OPT HEX        -> ok
  send FRAME...           one message; each frame hex, "-" for an empty frame -> ok
  recv TIMEOUT_MS         -> msg FRAME... | err EAGAIN
  recvprop TIMEOUT_MS NAME  receives one message; its first frame's connection property NAME
                          (zmq_msg_gets) -> ok HEX | err EINVAL (no such property) | err EAGAIN
  sendn COUNT SIZE        COUNT messages, each SIZE bytes, the first 4 bytes the big-endian index
  recvn COUNT TIMEOUT_MS  receives COUNT such messages, checks order and size -> ok COUNT SIZE
  serve IDLE_MS           echo every message back until none arrives for IDLE_MS -> ok ECHOED
  bounce COUNT TIMEOUT_MS recv then send back COUNT times (REP, PAIR, ROUTER echo) -> ok COUNT
  info                    -> ok ZMQ_VERSION PYZMQ_VERSION
  monitor                 start counting the socket's connection events -> ok
  events WAIT_MS          drain events (waiting up to WAIT_MS for the first)
                          -> ok connected=N accepted=N disconnected=N
  quit                    close (LINGER as set) and exit -> ok

Perf roles (libzmq's perf tool behaviour, for checking oxmq's perf tools on the wire):
  peer.py perf local_thr|remote_thr|local_lat|remote_lat ENDPOINT SIZE COUNT
"""

import errno
import signal
import struct
import sys
import time

import zmq


def enc(frames):
    return " ".join(f.hex() if len(f) else "-" for f in frames)


def dec(tokens):
    return [b"" if t == "-" else bytes.fromhex(t) for t in tokens]


def reply(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def errname(e):
    """The errno's symbolic name (EAGAIN, EFSM, EHOSTUNREACH, ...)."""
    for name in ("EAGAIN", "EFSM", "EHOSTUNREACH", "EINVAL", "ETERM", "ENOTSUP", "EADDRINUSE"):
        if getattr(zmq, name, None) == e.errno:
            return name
    return errno.errorcode.get(e.errno, "E%d" % e.errno)


def serve(argv):
    kind = getattr(zmq, argv[0].upper())
    ctx = zmq.Context()
    sock = ctx.socket(kind)
    sock.setsockopt(zmq.LINGER, 2000)
    reply("ok ready")
    mon, counts = None, {}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        try:
            if cmd == "bind":
                sock.bind(args[0])
                reply("ok " + sock.getsockopt_string(zmq.LAST_ENDPOINT))
            elif cmd == "connect":
                sock.connect(args[0])
                reply("ok")
            elif cmd == "unbind":
                sock.unbind(args[0])
                reply("ok")
            elif cmd == "disconnect":
                sock.disconnect(args[0])
                reply("ok")
            elif cmd == "setint":
                sock.setsockopt(getattr(zmq, args[0]), int(args[1]))
                reply("ok")
            elif cmd == "setbytes":
                sock.setsockopt(getattr(zmq, args[0]), b"" if args[1] == "-" else bytes.fromhex(args[1]))
                reply("ok")
            elif cmd == "send":
                sock.send_multipart(dec(args))
                reply("ok")
            elif cmd == "recv":
                if sock.poll(int(args[0]), zmq.POLLIN):
                    reply("msg " + enc(sock.recv_multipart()))
                else:
                    reply("err EAGAIN timeout")
            elif cmd == "recvprop":
                if sock.poll(int(args[0]), zmq.POLLIN):
                    frames = sock.recv_multipart(copy=False)
                    reply("ok " + (frames[0].get(args[1]).encode().hex() or "-"))
                else:
                    reply("err EAGAIN timeout")
            elif cmd == "sendn":
                count, size = int(args[0]), int(args[1])
                for i in range(count):
                    body = struct.pack(">I", i) + b"\x00" * (size - 4) if size >= 4 else b"\x00" * size
                    sock.send(body)
                reply("ok %d" % count)
            elif cmd == "recvn":
                count, timeout = int(args[0]), int(args[1])
                size = None
                for i in range(count):
                    if not sock.poll(timeout, zmq.POLLIN):
                        raise RuntimeError("timeout after %d of %d" % (i, count))
                    m = sock.recv()
                    if size is None:
                        size = len(m)
                    if len(m) != size:
                        raise RuntimeError("message %d has %d bytes, not %d" % (i, len(m), size))
                    if size >= 4 and struct.unpack(">I", m[:4])[0] != i:
                        raise RuntimeError("message %d carries index %d" % (i, struct.unpack(">I", m[:4])[0]))
                reply("ok %d %d" % (count, size or 0))
            elif cmd == "serve":
                idle = int(args[0])
                n = 0
                while sock.poll(idle, zmq.POLLIN):
                    sock.send_multipart(sock.recv_multipart())
                    n += 1
                reply("ok %d" % n)
            elif cmd == "bounce":
                count, timeout = int(args[0]), int(args[1])
                for i in range(count):
                    if not sock.poll(timeout, zmq.POLLIN):
                        raise RuntimeError("timeout after %d of %d" % (i, count))
                    sock.send_multipart(sock.recv_multipart())
                reply("ok %d" % count)
            elif cmd == "monitor":
                mon = sock.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
                reply("ok")
            elif cmd == "events":
                from zmq.utils.monitor import recv_monitor_message
                wait = int(args[0])
                while mon.poll(wait, zmq.POLLIN):
                    ev = recv_monitor_message(mon)["event"]
                    counts[ev] = counts.get(ev, 0) + 1
                    wait = 0
                reply("ok connected=%d accepted=%d disconnected=%d" % tuple(
                    counts.get(e, 0) for e in (zmq.EVENT_CONNECTED, zmq.EVENT_ACCEPTED, zmq.EVENT_DISCONNECTED)))
            elif cmd == "info":
                reply("ok %s %s" % (zmq.zmq_version(), zmq.pyzmq_version()))
            elif cmd == "quit":
                sock.close()
                ctx.term()
                reply("ok")
                return 0
            else:
                reply("err EINVAL unknown command " + cmd)
        except zmq.ZMQError as e:
            reply("err %s %s" % (errname(e), e))
        except Exception as e:  # a failed check: report it, keep serving
            reply("err FAIL %s" % str(e).replace("\n", " "))
    return 0


def perf(argv):
    """libzmq's perf tools, in pyzmq: the reference the oxmq tools are checked against."""
    role, endpoint, size, count = argv[0], argv[1], int(argv[2]), int(argv[3])
    ctx = zmq.Context()
    if role == "local_thr":
        s = ctx.socket(zmq.PULL)
        s.bind(endpoint)
        print("bound", flush=True)
        m = s.recv(copy=False)
        assert len(m) == size, "message of incorrect size received"
        t0 = time.perf_counter()
        for _ in range(count - 1):
            m = s.recv(copy=False)
            assert len(m) == size, "message of incorrect size received"
        elapsed = max(int((time.perf_counter() - t0) * 1e6), 1)
        thr = int(count / elapsed * 1e6)
        print("message size: %d [B]" % size)
        print("message count: %d" % count)
        print("mean throughput: %d [msg/s]" % thr)
        print("mean throughput: %.3f [Mb/s]" % (thr * size * 8 / 1e6), flush=True)
    elif role == "remote_thr":
        s = ctx.socket(zmq.PUSH)
        s.connect(endpoint)
        body = b"\x00" * size
        for _ in range(count):
            s.send(body)
    elif role == "local_lat":
        s = ctx.socket(zmq.REP)
        s.bind(endpoint)
        print("bound", flush=True)
        for _ in range(count):
            m = s.recv()
            assert len(m) == size, "message of incorrect size received"
            s.send(m)
    elif role == "remote_lat":
        s = ctx.socket(zmq.REQ)
        s.connect(endpoint)
        body = b"\x00" * size
        t0 = time.perf_counter()
        for _ in range(count):
            s.send(body)
            m = s.recv()
            assert len(m) == size, "message of incorrect size received"
        elapsed = (time.perf_counter() - t0) * 1e6
        print("message size: %d [B]" % size)
        print("roundtrip count: %d" % count)
        print("average latency: %.3f [us]" % (elapsed / (count * 2)), flush=True)
    else:
        print("unknown perf role " + role, file=sys.stderr)
        return 2
    s.close()
    ctx.term()
    return 0


def main():
    argv = sys.argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "perf":
        signal.alarm(120)
        return perf(argv[1:])
    signal.alarm(int(argv[1]) if len(argv) > 1 else 60)
    return serve(argv)


if __name__ == "__main__":
    sys.exit(main())
