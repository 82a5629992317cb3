"""Context: pyzmq's Context API over the native ``_oxmq.Context``."""

import threading
import weakref
from typing import Any, Dict, Optional, Type

from . import _oxmq, constants
from .constants import LINGER, ctx_opts
from .error import ZMQError
from .socket import _SOCKOPT_NAMES, Socket

_CTX_OPT_NAMES = {
    "io_threads": constants.IO_THREADS, "max_sockets": constants.MAX_SOCKETS,
    "socket_limit": constants.SOCKET_LIMIT, "thread_priority": constants.THREAD_PRIORITY,
    "thread_sched_policy": constants.THREAD_SCHED_POLICY, "max_msgsz": constants.MAX_MSGSZ,
    "msg_t_size": constants.MSG_T_SIZE, "ipv6": constants.IPV6, "blocky": constants.BLOCKY,
}


class Context(_oxmq.Context):
    """A ZeroMQ context: creates sockets; ``term()`` waits until they are all closed.

    Usable as a context manager: on exit, sockets still open are closed (with their LINGER) and
    the context is terminated.
    """

    _instance: Optional["Context"] = None
    _instance_lock = threading.Lock()
    _socket_class: Type[Socket] = Socket

    def __new__(cls, io_threads: int = 1, **kwargs: Any) -> "Context":
        self = super().__new__(cls, io_threads)
        object.__setattr__(self, "_sockets", weakref.WeakSet())
        object.__setattr__(self, "sockopts", {})
        return self

    def __init__(self, io_threads: int = 1, **kwargs: Any) -> None:
        pass

    @classmethod
    def instance(cls, io_threads: int = 1) -> "Context":
        """The process-wide shared context (created on first use; recreated after term)."""
        inst = cls._instance
        if inst is None or inst.closed:
            with cls._instance_lock:
                if cls._instance is None or cls._instance.closed:
                    cls._instance = cls(io_threads=io_threads)
                inst = cls._instance
        return inst

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *args: Any) -> None:
        self.destroy()

    def __repr__(self) -> str:
        closed = " closed" if self.closed else ""
        return f"<oxmq.Context() at {hex(id(self))}{closed}>"

    def socket(self, socket_type: int, socket_class: Optional[Type[Socket]] = None, **kwargs: Any) -> Socket:
        """Creates a socket; default options set on the context (``ctx.linger = 0``) apply."""
        if self.closed:
            raise ZMQError(constants.ENOTSUP)
        cls = socket_class or self._socket_class
        s = cls(self, socket_type, **kwargs)
        for opt, value in self.sockopts.items():
            try:
                s.setsockopt(opt, value)
            except ZMQError:
                pass  # an option that does not apply to this socket type
        self._sockets.add(s)
        return s

    def term(self) -> None:
        """Terminates the context: blocking calls on its sockets raise ContextTerminated, and
        this call waits (GIL released) until every socket is closed."""
        super().term()

    def destroy(self, linger: Optional[int] = None) -> None:
        """Closes every socket this context created (with ``linger`` if given), then terms."""
        for s in list(self._sockets):
            if not s.closed:
                try:
                    s.close(linger=linger)
                except ZMQError:
                    # In use by a thread blocked in a call: shut down makes it return.
                    self.shutdown()
        super().term()

    def setsockopt(self, option: int, optval: Any) -> None:
        """Sets a default option for sockets created later."""
        self.sockopts[option] = optval

    def getsockopt(self, option: int) -> Any:
        return self.sockopts[option]

    def set(self, option: int, optval: Any) -> None:  # type: ignore[override]
        super().set(option, optval)

    def get(self, option: int) -> Any:  # type: ignore[override]
        return super().get(option)

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        k = key.lower()
        if k in _CTX_OPT_NAMES:
            return self.get(_CTX_OPT_NAMES[k])
        if k in _SOCKOPT_NAMES and _SOCKOPT_NAMES[k] in self.sockopts:
            return self.sockopts[_SOCKOPT_NAMES[k]]
        raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")

    def __setattr__(self, key: str, value: Any) -> None:
        if key.startswith("_") or key in self.__dict__ or any(key in vars(c) for c in type(self).__mro__):
            object.__setattr__(self, key, value)
            return
        k = key.lower()
        if k in _CTX_OPT_NAMES:
            self.set(_CTX_OPT_NAMES[k], value)
        elif k in _SOCKOPT_NAMES:
            self.sockopts[_SOCKOPT_NAMES[k]] = value
        else:
            raise AttributeError(f"{type(self).__name__} has no option {key!r}")

    def __delattr__(self, key: str) -> None:
        k = key.lower()
        if k in _SOCKOPT_NAMES and _SOCKOPT_NAMES[k] in self.sockopts:
            del self.sockopts[_SOCKOPT_NAMES[k]]
        else:
            object.__delattr__(self, key)


__all__ = ["Context"]
