"""oxmq: ZeroMQ in Rust, with pyzmq's API.

``import oxmq as zmq`` runs typical pyzmq programs unchanged::

    import oxmq as zmq
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push = ctx.socket(zmq.PUSH)
    push.connect(f"tcp://127.0.0.1:{port}")
    push.send(b"hello")
    assert pull.recv() == b"hello"

PLAIN and CURVE security: the socket options, ``curve_keypair``/``curve_public``, and
``oxmq.auth`` (pyzmq's ``zmq.auth``: authenticators and certificate files). Socket monitoring:
``Socket.monitor`` and ``zmq.utils.monitor``; message metadata through ``Frame.get``.

The draft socket types with pyzmq's draft API (``zmq.DRAFT_API`` is True): SERVER and CLIENT
(``Frame.routing_id``, ``send(..., routing_id=...)``), RADIO and DISH (``join``/``leave``,
``Frame.group``, ``send(..., group=...)``), SCATTER/GATHER, PEER (``connect_peer``, an oxmq
addition: libzmq's ``zmq_connect_peer``), CHANNEL and DGRAM. As in libzmq, all but DGRAM are
thread-safe; unlike libzmq's, they have a readiness descriptor (``Socket.fd``), so they work
with ``oxmq.asyncio`` and ``Poller``.

Not implemented yet: STREAM sockets.
"""

from typing import Tuple

from . import _oxmq
from .constants import *  # noqa: F401,F403
from .constants import VERSION_MAJOR, VERSION_MINOR, VERSION_PATCH
from .error import (Again, ContextTerminated, InterruptedSystemCall, NotDone, ZMQBaseError,  # noqa: F401
                    ZMQBindError, ZMQError)
from ._frame import _DONE_TRACKER, Frame, Message, MessageTracker  # noqa: F401
from .socket import Socket  # noqa: F401
from .context import Context  # noqa: F401
from .poll import Poller, select, zmq_poll  # noqa: F401
from . import constants, error  # noqa: F401
from . import utils  # noqa: F401
from ._security import curve_keypair, curve_public  # noqa: F401

__version__ = _oxmq.__version__
__revision__ = ""

#: pyzmq's threshold for zero-copy sends; oxmq shares ``bytes`` bodies of 1 KiB and up.
COPY_THRESHOLD = 65536
DRAFT_API = True
IPC_PATH_MAX_LEN = 107

strerror = _oxmq.strerror
proxy = _oxmq.proxy
proxy_steerable = _oxmq.proxy_steerable

# The pyzmq API level this package mirrors (programs compare it, e.g. >= (17,)).
_PYZMQ_API = "27.0.0"


def zmq_version() -> str:
    """The libzmq version whose API and behaviour oxmq matches."""
    return f"{VERSION_MAJOR}.{VERSION_MINOR}.{VERSION_PATCH}"


def zmq_version_info() -> Tuple[int, int, int]:
    return (VERSION_MAJOR, VERSION_MINOR, VERSION_PATCH)


def pyzmq_version() -> str:
    """The pyzmq API level this package implements (oxmq's own version is ``__version__``)."""
    return _PYZMQ_API


def pyzmq_version_info() -> Tuple[int, ...]:
    return tuple(int(x) for x in _PYZMQ_API.split("."))


def oxmq_version() -> str:
    return __version__


_CAPABILITIES = {"ipc": True, "pgm": False, "tipc": False, "norm": False, "curve": True,
                 "gssapi": False, "draft": True, "vmci": False}


def has(capability: str) -> bool:
    """Whether a libzmq capability is available (ipc, curve and draft yes; pgm, norm... no)."""
    return _CAPABILITIES.get(capability, False)


def zmq_errno() -> int:
    """pyzmq compatibility: oxmq raises errors with their errno instead of keeping a global."""
    return 0


def get_includes():
    return []


def get_library_dirs():
    return []


__all__ = (["Context", "Socket", "Frame", "Message", "MessageTracker", "Poller", "select",
            "zmq_poll", "proxy", "proxy_steerable", "strerror", "zmq_version",
            "zmq_version_info", "pyzmq_version", "pyzmq_version_info", "has", "COPY_THRESHOLD",
            "curve_keypair", "curve_public",
            "ZMQBaseError", "ZMQError", "ZMQBindError", "NotDone", "Again", "ContextTerminated",
            "InterruptedSystemCall"] + constants.__all__)
