"""Frame: a received message frame whose body is shared, not copied."""

from typing import Any

from . import _oxmq
from .constants import MORE, SHARED


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

    def get(self, option: Any) -> Any:
        if option == MORE or option == "more":
            return self.more
        if option == SHARED:
            return False
        raise NotImplementedError("message metadata (zmq_msg_gets) is not implemented in oxmq yet")

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
