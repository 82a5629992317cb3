import pytest

import oxmq


@pytest.fixture
def ctx():
    c = oxmq.Context()
    yield c
    c.destroy(linger=0)


def pair(ctx, bind_type, connect_type, transport="tcp"):
    """A bound and a connected socket (tcp on a random port, or inproc/ipc)."""
    a = ctx.socket(bind_type)
    b = ctx.socket(connect_type)
    for s in (a, b):
        s.linger = 0
        s.rcvtimeo = 5000
        s.sndtimeo = 5000
    if transport == "tcp":
        port = a.bind_to_random_port("tcp://127.0.0.1")
        b.connect(f"tcp://127.0.0.1:{port}")
    else:
        import os
        ep = f"{transport}://oxmq-test-{os.getpid()}-{id(a)}" if transport == "inproc" else f"ipc://@oxmq-test-{os.getpid()}-{id(a)}"
        a.bind(ep)
        b.connect(ep)
    return a, b
