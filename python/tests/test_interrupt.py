"""Ctrl-C interrupts blocking calls promptly; nothing crashes."""

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.timeout(60)

BLOCKERS = {
    "recv": "s = ctx.socket(zmq.PULL); s.bind('tcp://127.0.0.1:*'); print('ready', flush=True); s.recv()",
    "recv_multipart": "s = ctx.socket(zmq.PULL); s.bind('inproc://x'); print('ready', flush=True); s.recv_multipart()",
    "send_at_hwm": ("s = ctx.socket(zmq.PUSH); s.sndhwm = 1; s.connect('tcp://127.0.0.1:1'); s.send(b'1');"
                    "print('ready', flush=True); [s.send(b'x') for _ in range(10)]"),
    "poller": "s = ctx.socket(zmq.PULL); p = zmq.Poller(); p.register(s); print('ready', flush=True); p.poll()",
    "socket_poll": "s = ctx.socket(zmq.PULL); print('ready', flush=True); s.poll()",
    "term": "s = ctx.socket(zmq.PULL); print('ready', flush=True); ctx.term()",
}


@pytest.mark.parametrize("what", sorted(BLOCKERS))
def test_sigint_interrupts_blocking_call(what):
    code = (
        "import oxmq as zmq\n"
        "ctx = zmq.Context()\n"
        "try:\n"
        f"    {BLOCKERS[what]}\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt', flush=True)\n"
        "    import os; os._exit(42)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.3)  # let it block
        t = time.monotonic()
        p.send_signal(signal.SIGINT)
        rc = p.wait(timeout=5)
        took = time.monotonic() - t
    finally:
        if p.poll() is None:
            p.kill()
    out = p.stdout.read()
    assert rc == 42, (rc, out, p.stderr.read())
    assert "KeyboardInterrupt" in out
    assert took < 1.0, f"KeyboardInterrupt took {took:.2f}s"


def test_uncaught_sigint_exits_with_keyboardinterrupt():
    code = ("import oxmq as zmq\nctx = zmq.Context()\ns = ctx.socket(zmq.PULL)\n"
            "s.bind('inproc://x')\nprint('ready', flush=True)\ns.recv()\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=5)
    finally:
        if p.poll() is None:
            p.kill()
    err = p.stderr.read()
    assert "KeyboardInterrupt" in err, err
    assert p.returncode != 0 and p.returncode != -signal.SIGSEGV
