"""send/recv take a METH_FASTCALL path on CPython 3.10+ (python/src/fast.rs) for the common
argument shapes and hand every other shape to the ordinary methods: both must behave alike."""

import sys

import pytest

import oxmq as zmq
from conftest import pair

pytestmark = pytest.mark.timeout(30)


def test_fast_methods_installed_where_the_stable_abi_allows():
    kind = type(zmq.Socket.__dict__["recv"]).__name__
    if sys.version_info >= (3, 10):
        assert "recv" in zmq.Socket.__dict__ and "send" in zmq.Socket.__dict__
        assert kind == "method_descriptor"
    assert zmq.Socket.recv.__doc__


def test_argument_shapes_behave_like_the_ordinary_methods(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    a.send(b"one")
    assert b.recv() == b"one"
    a.send(b"two", 0)
    assert b.recv(0) == b"two"
    a.send(b"three", flags=0)  # keyword: the ordinary method
    assert b.recv(flags=0) == b"three"
    a.send(b"head", zmq.SNDMORE)
    a.send(memoryview(b"tail"), copy=False)
    assert b.recv(copy=False).bytes == b"head"
    assert b.rcvmore
    assert b.recv(0, False).bytes == b"tail"  # two positionals: the ordinary method
    send, recv = a.send, b.recv  # bound methods take the same path
    send(bytearray(b"bound"))
    assert recv() == b"bound"
    with pytest.raises(zmq.Again):
        b.recv(zmq.NOBLOCK)
    with pytest.raises(TypeError):
        b.recv("not flags")
    with pytest.raises(TypeError):
        a.send()
    with pytest.raises(TypeError):
        a.send(123)
    with pytest.raises(TypeError):
        a.send(b"x", "not flags")


def test_closed_socket_raises_enotsock_on_both_paths(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    a.close()
    for call in (lambda: a.send(b"x"), lambda: a.send(b"x", copy=True), lambda: a.recv(),
                 lambda: a.recv(copy=False)):
        with pytest.raises(zmq.ZMQError) as e:
            call()
        assert e.value.errno == zmq.ENOTSOCK


def test_descriptor_rejects_foreign_self():
    with pytest.raises(TypeError):
        zmq.Socket.recv(object())


def test_descriptor_checks_self_however_it_is_reached(ctx):
    # The fast methods skip PyO3's type check on self: CPython's descriptor has made it, whether
    # the method is called on an instance, bound first, or moved to another class.
    with pytest.raises(TypeError):
        zmq.Socket.send.__get__(object())
    with pytest.raises(TypeError):
        zmq.Socket.send(object(), b"x")

    class Foreign:
        recv = zmq.Socket.__dict__["recv"]
    with pytest.raises(TypeError):
        Foreign().recv()


class Bytes(bytes):
    pass


@pytest.mark.parametrize("size", [0, 1, 38, 39, 256, 1023, 1024, 70000])
def test_bytes_of_every_size_and_kind_arrive_whole(ctx, size):
    # Small exact bytes are copied on the fast path; a subclass, big bytes (shared with the
    # frame), and other buffers take the general one. All must arrive unchanged, and what the
    # sender does with its object afterwards must not matter.
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    data = bytes(i % 251 for i in range(size))
    for obj in (data, Bytes(data), bytearray(data), memoryview(data)):
        a.send(obj)
        del obj
        got = b.recv()
        assert type(got) is bytes and got == data
    buf = bytearray(data)
    a.send(buf)
    buf[:] = b"\xff" * size  # a mutable buffer is copied at send
    assert b.recv() == data


def test_flags_copy_track_by_keyword_or_position(ctx):
    a, b = pair(ctx, zmq.PAIR, zmq.PAIR)
    a.send(b"k1", flags=0, copy=False)
    f = b.recv(copy=False)
    assert isinstance(f, zmq.Frame) and f.bytes == b"k1"
    a.send(b"k2", 0, True, False)
    assert b.recv(0, True, False) == b"k2"
    a.send(b"k3", zmq.SNDMORE, copy=True)
    a.send(b"k4", copy=False, flags=0)
    assert b.recv(flags=0, copy=True) == b"k3" and b.rcvmore
    assert b.recv(0, copy=False).bytes == b"k4"
    tracker = a.send(b"k5", track=True)
    assert tracker.done
    assert a.send(b"k6", track=False) is None
    assert b.recv(track=False) == b"k5"
    frame = b.recv(0, False)
    a.send(frame, copy=False)  # a received Frame goes back out as it is
    assert b.recv() == b"k6"
    with pytest.raises(zmq.Again):
        b.recv(flags=zmq.NOBLOCK, copy=False)
    # What the fast path does not parse goes to the ordinary method: same errors as before.
    with pytest.raises(TypeError):
        b.recv(0, flags=0)  # given twice
    with pytest.raises(TypeError):
        b.recv(bogus=1)
    with pytest.raises(TypeError):
        b.recv(0, True, False, 1)
    with pytest.raises(TypeError):
        b.recv(copy=1)  # PyO3's bool: an int is refused on both paths
    with pytest.raises(TypeError):
        a.send(b"x", track="yes")
    with pytest.raises(TypeError):
        a.send(data=b"x", flags="no")
    with pytest.raises(TypeError):
        a.send(flags=0)
    a.send(data=b"kw")  # data by keyword: the ordinary method
    assert b.recv() == b"kw"
