"""Exceptions, with pyzmq's class hierarchy: ZMQBaseError → ZMQError → Again, ContextTerminated,
InterruptedSystemCall, NotDone..."""

from typing import Optional

from . import _oxmq


class ZMQBaseError(Exception):
    """Base of every oxmq exception."""


class ZMQError(ZMQBaseError):
    """An error from a ZeroMQ call; ``errno`` is libzmq's errno value."""

    errno: Optional[int] = None
    strerror: str = ""

    def __init__(self, errno: Optional[int] = None, msg: Optional[str] = None) -> None:
        if isinstance(errno, int):
            self.errno = errno
            self.strerror = msg if msg is not None else _oxmq.strerror(errno)
        else:
            if msg is None:
                msg = errno
            self.strerror = str(msg)
        super().__init__(self.strerror)

    def __str__(self) -> str:
        return self.strerror

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class ZMQBindError(ZMQBaseError):
    """bind_to_random_port found no free port."""


class NotDone(ZMQBaseError):
    """A MessageTracker timed out."""


class Again(ZMQError):
    """EAGAIN: the call would block (DONTWAIT) or timed out (RCVTIMEO/SNDTIMEO)."""


class ContextTerminated(ZMQError):
    """ETERM: the context was terminated."""


class InterruptedSystemCall(ZMQError, InterruptedError):
    """EINTR: interrupted by a signal."""

    def __init__(self, errno="ignored", msg: Optional[str] = None) -> None:
        super().__init__(4, msg)

    def __str__(self) -> str:
        return self.strerror + ": retry the call"


def _check_rc(rc: int, errno: Optional[int] = None) -> None:
    if rc == -1:
        raise ZMQError(errno)


_oxmq._set_error_classes(ZMQError, Again, ContextTerminated, InterruptedSystemCall)

__all__ = [
    "ZMQBaseError", "ZMQError", "ZMQBindError", "NotDone", "Again", "ContextTerminated",
    "InterruptedSystemCall",
]
