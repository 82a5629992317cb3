"""Frame: a received message frame whose body is shared, not copied."""

from typing import Any

from . import _oxmq
from .constants import EINVAL, MORE, SHARED
from .error import ZMQError


class MessageTracker:
    """pyzmq's MessageTracker. oxmq copies every mutable buffer it is given to send (and shares
    only immutable ``bytes``), so a caller may reuse its buffer as soon as ``send`` returns: the
    tracker it returns is always done."""

    done = True

    def wait(self, timeout: float = -1) -> None:
        return None


_DONE_TRACKER = MessageTracker()


class Frame(_oxmq.Frame):
    """One message frame. Supports the buffer protocol without copying
    (``memoryview(frame)``, ``numpy.frombuffer(frame)``), and keeps its body alive after the
    socket and context that received it are gone. ``Frame(b"data")`` builds one to send."""

    __slots__ = ()
    tracker = None
    tracked = False

    @property
    def bytes(self) -> "bytes":
        """A copy of the body as bytes."""
        return bytes(memoryview(self))

    @property
    def buffer(self) -> memoryview:
        """A read-only memoryview of the body (no copy)."""
        return memoryview(self)

    def __len__(self) -> int:
        return memoryview(self).nbytes

    @property
    def routing_id(self) -> int:
        """SERVER, PEER: the peer a received frame came from, or the one to send it to (pyzmq's
        draft API). ``ZMQError(EINVAL)`` when it has none, as pyzmq."""
        rid = _oxmq._frame_routing_id(self)
        if rid == 0:
            raise ZMQError(EINVAL)
        return rid

    @routing_id.setter
    def routing_id(self, routing_id: int) -> None:
        _oxmq._frame_set_routing_id(self, routing_id)

    @property
    def group(self) -> str:
        """RADIO, DISH: the group a received frame came in, or the one to send it to (pyzmq's
        draft API); "" when it has none, as libzmq's ``zmq_msg_group``."""
        return _oxmq._frame_group(self).decode("utf-8")

    @group.setter
    def group(self, group: Any) -> None:
        _oxmq._frame_set_group(self, group.encode("utf-8") if isinstance(group, str) else bytes(group))

    def set(self, option: Any, value: Any) -> None:
        """``"routing_id"`` or ``"group"`` (pyzmq's draft API); other options are EINVAL."""
        if option == "routing_id":
            self.routing_id = value
        elif option == "group":
            self.group = value
        else:
            raise ZMQError(EINVAL)

    def get(self, option: Any) -> Any:
        """``MORE``/``SHARED``, ``"routing_id"``/``"group"`` (draft), or (a str) a property of
        the connection the frame arrived on, as pyzmq's ``zmq_msg_gets``: "User-Id",
        "Socket-Type", "Peer-Address", "Identity", or what the peer or a ZAP handler supplied.
        ``ZMQError(EINVAL)`` if there is none."""
        if option == MORE or option == "more":
            return self.more
        if option == SHARED:
            return False
        if option == "routing_id":
            return self.routing_id
        if option == "group":
            return self.group
        if isinstance(option, str):
            value = _oxmq._frame_gets(self, option)
            if value is None:
                raise ZMQError(EINVAL)
            return value.decode("utf-8")
        raise ZMQError(EINVAL)

    __getitem__ = get

    def __copy__(self) -> "Frame":
        return type(self)(self)

    fast_copy = __copy__

    def __str__(self) -> str:
        return self.bytes.decode("utf-8", "replace")

    def __repr__(self) -> str:
        b = memoryview(self)
        head = bytes(b[:32])
        return f"<oxmq.Frame({head!r}{'...' if b.nbytes > 32 else ''}{', more' if self.more else ''})>"

    def __eq__(self, other: Any) -> bool:
        try:
            return memoryview(self) == memoryview(other)
        except TypeError:
            return NotImplemented

    __hash__ = None  # type: ignore[assignment]


Message = Frame
_oxmq._set_frame_class(Frame)
