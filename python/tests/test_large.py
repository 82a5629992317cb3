"""A message over 2 GiB through the Python package (issue 44), as pyzmq on libzmq moves it."""

import os

import pytest

import oxmq as zmq
from conftest import pair

pytestmark = [
    pytest.mark.timeout(600),
    pytest.mark.skipif(os.environ.get("OXMQ_BIG_TESTS") != "1",
                       reason="OXMQ_BIG_TESTS=1 runs it (about 4.5 GB; the Rust suite moves such a message in every run)"),
]


def test_over_2gib_message_moves_whole(ctx):
    n = (1 << 31) + 1
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    a.rcvtimeo = 300_000
    data = bytearray(n)  # copied by send (a mutable buffer), then let go
    data[0], data[-1] = ord("F"), ord("Z")
    b.send_multipart([b"head", data])
    del data
    head, body = a.recv_multipart(copy=False)
    view = memoryview(body)
    assert bytes(head) == b"head"
    assert (view.nbytes, view[0], view[1], view[-1]) == (n, ord("F"), 0, ord("Z"))
    assert len(body) == n
    del view, body
    b.send(b"after")
    assert a.recv() == b"after"
