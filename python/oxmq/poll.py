"""Poller and select, over the native ``zmq_poll`` (which releases the GIL and stays
interruptible by Ctrl-C)."""

from typing import Any, List, Optional, Tuple

from . import _oxmq
from .constants import POLLERR, POLLIN, POLLOUT


def zmq_poll(sockets: List[Tuple[Any, int]], timeout: Optional[float] = -1) -> List[Tuple[Any, int]]:
    """Polls (socket or fd, events) pairs; ``timeout`` in ms (-1 or None: forever)."""
    if timeout is None or timeout < 0:
        timeout = -1
    return _oxmq.zmq_poll(list(sockets), int(timeout))


class Poller:
    """A poll set of sockets and file descriptors (pyzmq's Poller)."""

    def __init__(self) -> None:
        self.sockets: List[Tuple[Any, int]] = []
        self._map: dict = {}

    def __contains__(self, socket: Any) -> bool:
        return socket in self._map

    def register(self, socket: Any, flags: int = POLLIN | POLLOUT) -> None:
        """Adds (or changes) a socket or fd; ``flags=0`` unregisters it."""
        if flags:
            if socket in self._map:
                idx = self._map[socket]
                self.sockets[idx] = (socket, flags)
            else:
                self._map[socket] = len(self.sockets)
                self.sockets.append((socket, flags))
        elif socket in self._map:
            self.unregister(socket)

    def modify(self, socket: Any, flags: int = POLLIN | POLLOUT) -> None:
        self.register(socket, flags)

    def unregister(self, socket: Any) -> None:
        idx = self._map.pop(socket)
        self.sockets.pop(idx)
        for s, _ in self.sockets[idx:]:
            self._map[s] -= 1

    def poll(self, timeout: Optional[float] = None) -> List[Tuple[Any, int]]:
        """Waits up to ``timeout`` ms (None or negative: forever); returns [(socket, events)]."""
        if timeout is None or timeout < 0:
            timeout = -1
        return _oxmq.zmq_poll(self.sockets, int(timeout))


def select(rlist: List[Any], wlist: List[Any], xlist: List[Any], timeout: Optional[float] = None):
    """Like select.select, for sockets and fds; ``timeout`` in seconds."""
    if timeout is None:
        timeout = -1
    else:
        timeout = int(timeout * 1000.0)
        if timeout < 0:
            timeout = -1
    sockets = []
    for s in set(rlist + wlist + xlist):
        flags = 0
        if s in rlist:
            flags |= POLLIN
        if s in wlist:
            flags |= POLLOUT
        if s in xlist:
            flags |= POLLERR
        sockets.append((s, flags))
    ready = _oxmq.zmq_poll(sockets, timeout)
    r, w, x = [], [], []
    for s, ev in ready:
        if ev & POLLIN:
            r.append(s)
        if ev & POLLOUT:
            w.append(s)
        if ev & POLLERR:
            x.append(s)
    return r, w, x


__all__ = ["Poller", "select", "zmq_poll"]
