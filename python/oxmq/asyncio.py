"""asyncio support: a Context and Socket whose send/recv/poll return awaitable futures.

No thread per socket. Each socket's readiness fd (ZMQ_FD) is registered with the event loop
(``loop.add_reader``) only while some coroutine waits on that socket. The fd is edge-triggered,
as libzmq's: it fires when the socket's state may have changed, and reading ``events`` (or any
send/recv) consumes the edge. So every wake-up, and every operation that succeeds, re-reads
``events`` and resolves each waiter whose interest (POLLIN/POLLOUT) is now ready; a waiter
never depends on an edge another operation consumed.

Usage is pyzmq's::

    import oxmq.asyncio as zaio
    ctx = zaio.Context()
    sock = ctx.socket(zmq.PULL)
    msg = await sock.recv()
"""

import asyncio
from typing import Any, Callable, List, Optional, Tuple

import oxmq as _zmq
from .constants import DONTWAIT, POLLERR, POLLIN, POLLOUT, RCVTIMEO, SNDTIMEO
from .error import Again, ZMQError

__all__ = ["Context", "Socket", "Poller"]


class _Waiters:
    """The coroutines waiting on one socket, and whether its fd is registered with the loop."""

    __slots__ = ("loop", "items", "reading", "fd", "watching")

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int) -> None:
        self.loop = loop
        self.items: List[Tuple[asyncio.Future, int]] = []
        self.reading = False
        self.fd = fd
        # A thread-safe draft socket's other threads re-signal the fd while the loop watches
        # it (``Socket._watch``), so a change one of them takes does not leave the loop asleep.
        self.watching = False


class Socket(_zmq.Socket):
    """An asyncio socket: send/recv/send_multipart/recv_multipart/poll return futures."""

    _aw: Optional[_Waiters] = None

    # ----- readiness -----

    def _waiters(self) -> _Waiters:
        loop = asyncio.get_running_loop()
        w = self._aw
        if w is None or w.loop is not loop:
            w = _Waiters(loop, _zmq.Socket.fd.__get__(self))
            self._aw = w
        return w

    def _wake(self) -> None:
        """Resolves the waiters whose events are ready; keeps the fd registered while any wait."""
        w = self._aw
        if w is None:
            return
        try:
            ev = _zmq.Socket.events.__get__(self)
        except ZMQError:
            ev = POLLIN | POLLOUT | POLLERR  # closed or terminated: let every op find out
        keep = []
        for fut, mask in w.items:
            if fut.done():
                continue
            if ev & mask:
                fut.set_result(None)
            else:
                keep.append((fut, mask))
        w.items = keep
        if not keep and w.reading:
            self._stop_reading(w)

    async def _wait(self, mask: int, timeout: Optional[float]) -> None:
        w = self._waiters()
        fut = w.loop.create_future()
        w.items.append((fut, mask))
        if not w.reading:
            w.watching = _zmq.Socket._watch(self)
            w.loop.add_reader(w.fd, self._wake)
            w.reading = True
        # The operation that just said EAGAIN consumed the edge; something may have become
        # ready since. Look once before sleeping.
        self._wake()
        try:
            if timeout is None:
                await fut
            else:
                await asyncio.wait_for(fut, timeout)
        finally:
            if not fut.done():
                fut.cancel()
            if w.items and all(f.done() for f, _ in w.items):
                w.items = []
            if not w.items and w.reading:
                self._stop_reading(w)

    def _stop_reading(self, w: _Waiters) -> None:
        w.loop.remove_reader(w.fd)
        w.reading = False
        if w.watching:
            w.watching = False
            try:
                _zmq.Socket._unwatch(self)
            except ZMQError:
                pass  # closed meanwhile

    def _after_op(self) -> None:
        w = self._aw
        if w is not None and w.items:
            self._wake()

    async def _retry(self, op: Callable[[], Any], mask: int, timeo_opt: int) -> Any:
        loop = asyncio.get_running_loop()
        timeo = _zmq.Socket.getsockopt(self, timeo_opt)
        deadline = None if timeo < 0 else loop.time() + timeo / 1000.0
        while True:
            try:
                r = op()
            except Again:
                left = None if deadline is None else deadline - loop.time()
                if left is not None and left <= 0:
                    raise
                try:
                    await self._wait(mask, left)
                except asyncio.TimeoutError:
                    raise Again(_zmq.EAGAIN) from None
                continue
            self._after_op()
            return r

    def _start(self, op: Callable[[], Any], flags: int, mask: int, timeo_opt: int) -> "asyncio.Future":
        """Tries `op` at once (the common case costs no task); otherwise a task retries it."""
        loop = asyncio.get_running_loop()
        try:
            r = op()
        except Again as e:
            if flags & DONTWAIT:
                f = loop.create_future()
                f.set_exception(e)
                return f
            return asyncio.ensure_future(self._retry(op, mask, timeo_opt))
        except Exception as e:
            f = loop.create_future()
            f.set_exception(e)
            return f
        self._after_op()
        f = loop.create_future()
        f.set_result(r)
        return f

    # ----- awaitable operations -----

    def recv(self, flags: int = 0, copy: bool = True, track: bool = False) -> "asyncio.Future":  # type: ignore[override]
        base = _zmq.Socket.recv
        return self._start(lambda: base(self, flags | DONTWAIT, copy, track), flags, POLLIN, RCVTIMEO)

    def recv_multipart(self, flags: int = 0, copy: bool = True, track: bool = False) -> "asyncio.Future":  # type: ignore[override]
        base = _zmq.Socket.recv_multipart
        return self._start(lambda: base(self, flags | DONTWAIT, copy, track), flags, POLLIN, RCVTIMEO)

    def send(self, data: Any, flags: int = 0, copy: bool = True, track: bool = False, **kwargs: Any) -> "asyncio.Future":  # type: ignore[override]
        """``routing_id=`` (SERVER, PEER) and ``group=`` (RADIO) as the blocking ``send``."""
        base = _zmq.Socket.send
        return self._start(lambda: base(self, data, flags | DONTWAIT, copy, track, **kwargs), flags, POLLOUT, SNDTIMEO)

    def send_multipart(self, msg_parts: Any, flags: int = 0, copy: bool = True, track: bool = False, **kwargs: Any) -> "asyncio.Future":  # type: ignore[override]
        parts = list(msg_parts)
        base = _zmq.Socket.send_multipart
        return self._start(lambda: base(self, parts, flags | DONTWAIT, copy, track), flags, POLLOUT, SNDTIMEO)

    def poll(self, timeout: Optional[float] = None, flags: int = POLLIN) -> "asyncio.Future":  # type: ignore[override]
        """Resolves to the ready events (0 on timeout); ``timeout`` in ms."""
        return asyncio.ensure_future(self._poll(timeout, flags))

    async def _poll(self, timeout: Optional[float], flags: int) -> int:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None or timeout < 0 else loop.time() + timeout / 1000.0
        while True:
            ev = _zmq.Socket.events.__get__(self) & flags
            if ev or (deadline is not None and loop.time() >= deadline):
                return ev
            try:
                await self._wait(flags, None if deadline is None else max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                return 0

    def _deserialize(self, recvd: Any, load: Callable[[Any], Any]) -> "asyncio.Future":
        async def chain() -> Any:
            return load(await recvd)
        return asyncio.ensure_future(chain())

    def close(self, linger: Optional[int] = None) -> None:  # type: ignore[override]
        w = self._aw
        if w is not None:
            if w.reading and not w.loop.is_closed():
                self._stop_reading(w)
            for fut, _ in w.items:
                if not fut.done():
                    fut.cancel()
            w.items = []
        super().close(linger)


class Context(_zmq.Context):
    """A Context whose sockets are asyncio sockets."""

    _socket_class = Socket
    _instance = None


class Poller(_zmq.Poller):
    """A Poller whose ``poll`` returns a future (sockets must be asyncio sockets; plain fds
    work too)."""

    def poll(self, timeout: Optional[float] = None) -> "asyncio.Future":  # type: ignore[override]
        return asyncio.ensure_future(self._poll(timeout))

    async def _poll(self, timeout: Optional[float]) -> List[Tuple[Any, int]]:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None or timeout < 0 else loop.time() + timeout / 1000.0
        while True:
            ready = _zmq.zmq_poll(self.sockets, 0)
            if ready or (deadline is not None and loop.time() >= deadline):
                return ready
            futs = []
            fds = []
            for s, flags in self.sockets:
                if isinstance(s, Socket):
                    futs.append(asyncio.ensure_future(s._wait(flags, None)))
                else:
                    fd = s if isinstance(s, int) else s.fileno()
                    f = loop.create_future()
                    loop.add_reader(fd, lambda f=f: f.done() or f.set_result(None))
                    fds.append(fd)
                    futs.append(f)
            try:
                left = None if deadline is None else max(0.0, deadline - loop.time())
                await asyncio.wait(futs, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for f in futs:
                    f.cancel()
                for fd in fds:
                    loop.remove_reader(fd)
