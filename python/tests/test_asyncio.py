"""oxmq.asyncio: awaitable send/recv/poll driven by the readiness fd, no thread per socket."""

import asyncio
import threading

import pytest

import oxmq as zmq
import oxmq.asyncio as zaio

pytestmark = [pytest.mark.timeout(30), pytest.mark.asyncio]


@pytest.fixture
def actx():
    c = zaio.Context()
    yield c
    c.destroy(linger=0)


def apair(ctx, t1, t2):
    a = ctx.socket(t1)
    b = ctx.socket(t2)
    port = a.bind_to_random_port("tcp://127.0.0.1")
    b.connect(f"tcp://127.0.0.1:{port}")
    return a, b


async def test_recv_waits_then_completes(actx):
    pull, push = apair(actx, zmq.PULL, zmq.PUSH)
    threads = threading.active_count()
    fut = pull.recv()
    assert isinstance(fut, asyncio.Future)
    await asyncio.sleep(0.05)
    assert not fut.done()
    await push.send(b"hello")
    assert await asyncio.wait_for(fut, 5) == b"hello"
    assert threading.active_count() == threads  # no helper threads


async def test_many_messages_and_multipart(actx):
    pull, push = apair(actx, zmq.PULL, zmq.PUSH)

    async def producer():
        for i in range(3000):
            await push.send_multipart([b"k", str(i).encode()])

    async def consumer():
        got = []
        for _ in range(3000):
            got.append(int((await pull.recv_multipart())[1]))
        return got

    _, got = await asyncio.wait_for(asyncio.gather(producer(), consumer()), 20)
    assert got == list(range(3000))


async def test_req_rep_helpers(actx):
    rep, req = apair(actx, zmq.REP, zmq.REQ)

    async def server():
        for _ in range(50):
            obj = await rep.recv_json()
            await rep.send_string(str(obj["n"] * 2))

    async def client():
        out = []
        for n in range(50):
            await req.send_json({"n": n})
            out.append(await req.recv_string())
        return out

    _, out = await asyncio.wait_for(asyncio.gather(server(), client()), 10)
    assert out == [str(2 * n) for n in range(50)]


async def test_concurrent_send_and_recv_on_one_socket(actx):
    a, b = apair(actx, zmq.PAIR, zmq.PAIR)

    async def echo():
        for _ in range(200):
            await b.send(await b.recv())

    async def talk():
        for i in range(200):
            f = a.recv()
            await a.send(str(i).encode())
            assert await f == str(i).encode()

    await asyncio.wait_for(asyncio.gather(echo(), talk()), 10)


async def test_dontwait_and_rcvtimeo(actx):
    s = actx.socket(zmq.PULL)
    s.bind("inproc://aio-timeo")
    with pytest.raises(zmq.Again):
        await s.recv(zmq.DONTWAIT)
    s.rcvtimeo = 100
    with pytest.raises(zmq.Again):
        await s.recv()


async def test_poll_and_poller(actx):
    pull, push = apair(actx, zmq.PULL, zmq.PUSH)
    assert await pull.poll(50) == 0
    assert await push.poll(1000, zmq.POLLOUT) == zmq.POLLOUT
    poller = zaio.Poller()
    poller.register(pull, zmq.POLLIN)
    assert await poller.poll(50) == []
    f = poller.poll(5000)
    await push.send(b"x")
    assert await f == [(pull, zmq.POLLIN)]
    assert await pull.recv() == b"x"


async def test_cancel_recv(actx):
    pull, push = apair(actx, zmq.PULL, zmq.PUSH)
    f = pull.recv()
    await asyncio.sleep(0.01)
    f.cancel()
    await asyncio.sleep(0.01)
    await push.send(b"after-cancel")
    assert await asyncio.wait_for(pull.recv(), 5) == b"after-cancel"


async def test_async_with_pyzmq_peer(actx):
    pz = pytest.importorskip("zmq")
    c = pz.Context()
    try:
        push = c.socket(pz.PUSH)
        push.linger = 0
        pull = actx.socket(zmq.PULL)
        port = pull.bind_to_random_port("tcp://127.0.0.1")
        push.connect(f"tcp://127.0.0.1:{port}")
        f = pull.recv()
        await asyncio.sleep(0.02)
        push.send(b"from pyzmq")
        assert await asyncio.wait_for(f, 5) == b"from pyzmq"
        push.close()
    finally:
        c.term()
