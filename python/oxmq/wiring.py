"""The ØMQ wiring API: named exchanges and queues, scopes, and a name service.

The seed's Python extension (``pyzmq.ZMQ``), so its programs run with only the import line
changed::

    from oxmq import wiring as pyzmq
    zmq = pyzmq.ZMQ(hostname)           # "": the embedded name service on this machine
    eid = zmq.create_exchange("E", pyzmq.SCOPE_GLOBAL, "")
    zmq.create_queue("Q", pyzmq.SCOPE_LOCAL)
    zmq.bind("E", "Q"); zmq.send(eid, msg); msg = zmq.receive()

Errors are ``zmq.ZMQError`` (``oxmq.ZMQError``) with the errno the C front end reports:
ENOENT unknown exchange or queue, EADDRINUSE name taken, EHOSTUNREACH name service
unreachable, EINVAL bad location/scope/id; ``receive(timeout=...)`` raises ``Again`` when
the timeout runs out. See README.md, "The wiring API".
"""

from typing import Optional

from . import _oxmq
from .error import Again, ZMQError  # noqa: F401

SCOPE_LOCAL = 0
SCOPE_GLOBAL = 1
SCOPE_PROCESS = 2

STYLE_FANOUT = 0
STYLE_LOAD_BALANCE = 1

__all__ = ["ZMQ", "SCOPE_LOCAL", "SCOPE_GLOBAL", "SCOPE_PROCESS", "STYLE_FANOUT",
           "STYLE_LOAD_BALANCE", "ZMQError", "Again"]


class ZMQ(_oxmq.Wiring):
    """A wiring handle connected to the name service at ``hostname`` (``""``, ``host``,
    ``host:port``). Use it from one thread at a time.

    ``send(eid, message)`` sends bytes-like ``message`` (``str`` as UTF-8) through exchange
    ``eid``; ``receive(timeout=None)`` returns the next message from any queue of the handle,
    waiting forever or ``timeout`` seconds (then raising ``Again``). Both are the native
    methods themselves (no Python frame per message)."""

    def create_exchange(self, exchange: str, scope: int = SCOPE_LOCAL, location: Optional[str] = "",
                        style: int = STYLE_FANOUT) -> int:
        """Creates an exchange; returns its id for :meth:`send`."""
        return super().create_exchange(exchange, scope, location or "", style)

    def create_queue(self, queue: str, scope: int = SCOPE_LOCAL, location: Optional[str] = "") -> int:
        """Creates a queue; :meth:`receive` reads from every queue of the handle."""
        return super().create_queue(queue, scope, location or "")

    def __enter__(self) -> "ZMQ":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_oxmq._install_wiring_fast_methods(ZMQ)
