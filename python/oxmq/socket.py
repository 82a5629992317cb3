"""Socket: pyzmq's Socket API over the native ``_oxmq.Socket``.

send/recv (and their multipart forms, recv_into, poll, options) are native; this layer adds what
pyzmq adds in Python: attribute-style options (``sock.linger = 0``), string/json/pickle helpers,
bind_to_random_port, and context-manager use.
"""

import json
import pickle
import random
from typing import Any, Callable, List, Optional

from . import _oxmq, constants
from .constants import (DONTWAIT, LAST_ENDPOINT, POLLIN, RCVHWM, SNDHWM, SUBSCRIBE, UNSUBSCRIBE,
                        bytes_sockopts)
from .error import ZMQBindError, ZMQError
from .utils import z85

_CURVE_KEY_OPTS = (constants.CURVE_PUBLICKEY, constants.CURVE_SECRETKEY, constants.CURVE_SERVERKEY)

DEFAULT_PROTOCOL = pickle.DEFAULT_PROTOCOL

# Names usable as attributes (sock.linger, sock.routing_id, ...): every socket option constant.
_SOCKOPT_NAMES = {
    name.lower(): value
    for name, value in vars(constants).items()
    if name.isupper() and name in {
        "AFFINITY", "ROUTING_ID", "IDENTITY", "SUBSCRIBE", "UNSUBSCRIBE", "RATE", "RECOVERY_IVL",
        "SNDBUF", "RCVBUF", "RCVMORE", "FD", "EVENTS", "TYPE", "LINGER", "RECONNECT_IVL",
        "BACKLOG", "RECONNECT_IVL_MAX", "MAXMSGSIZE", "SNDHWM", "RCVHWM", "MULTICAST_HOPS",
        "RCVTIMEO", "SNDTIMEO", "LAST_ENDPOINT", "ROUTER_MANDATORY", "TCP_KEEPALIVE",
        "TCP_KEEPALIVE_CNT", "TCP_KEEPALIVE_IDLE", "TCP_KEEPALIVE_INTVL", "IMMEDIATE",
        "DELAY_ATTACH_ON_CONNECT", "XPUB_VERBOSE", "ROUTER_RAW", "IPV6", "MECHANISM",
        "PLAIN_SERVER", "PLAIN_USERNAME", "PLAIN_PASSWORD", "CURVE_SERVER", "CURVE_PUBLICKEY",
        "CURVE_SECRETKEY", "CURVE_SERVERKEY", "PROBE_ROUTER", "REQ_CORRELATE", "REQ_RELAXED",
        "CONFLATE", "ZAP_DOMAIN", "ROUTER_HANDOVER", "TOS", "CONNECT_ROUTING_ID", "CONNECT_RID",
        "HANDSHAKE_IVL", "SOCKS_PROXY", "XPUB_NODROP", "XPUB_MANUAL", "XPUB_WELCOME_MSG",
        "STREAM_NOTIFY", "INVERT_MATCHING", "HEARTBEAT_IVL", "HEARTBEAT_TTL",
        "HEARTBEAT_TIMEOUT", "XPUB_VERBOSER", "CONNECT_TIMEOUT", "TCP_MAXRT", "THREAD_SAFE",
        "MULTICAST_MAXTPDU", "BINDTODEVICE", "ZAP_ENFORCE_DOMAIN", "METADATA", "ROUTER_NOTIFY",
        "HWM", "SOCKS_USERNAME", "SOCKS_PASSWORD", "RECONNECT_STOP", "HELLO_MSG",
        "DISCONNECT_MSG", "OXMQ_DNS_FOLLOW", "OXMQ_DNS_IVL", "OXMQ_NAME",
    }
}


class Socket(_oxmq.Socket):
    """A ZeroMQ socket. Create one with ``ctx.socket(zmq.PUSH)`` (or ``Socket(ctx, type)``).

    Not thread-safe, like libzmq's: using it from two threads at once raises ZMQError(EFSM)
    instead of crashing; using it after ``close()`` raises ZMQError(ENOTSOCK).
    """

    copy_threshold = 65536
    _shadow = False

    # ----- pyzmq-compatible helpers -----

    def __enter__(self) -> "Socket":
        return self

    def __exit__(self, *args: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        names = {v: k for k, v in vars(constants).items() if k in (
            "PAIR", "PUB", "SUB", "REQ", "REP", "DEALER", "ROUTER", "PULL", "PUSH", "XPUB", "XSUB",
            "STREAM", "SERVER", "CLIENT", "RADIO", "DISH", "GATHER", "SCATTER", "DGRAM", "PEER",
            "CHANNEL")}
        closed = " closed" if self.closed else ""
        return f"<oxmq.Socket(zmq.{names.get(self.socket_type, self.socket_type)}) at {hex(id(self))}{closed}>"

    def set(self, option: int, optval: Any) -> None:
        if option == constants.HWM:
            self.set_hwm(optval)
            return
        self.setsockopt(option, optval)

    def get(self, option: int) -> Any:
        if option == constants.HWM:
            return self.get_hwm()
        return self.getsockopt(option)

    def setsockopt(self, option: int, optval: Any) -> None:  # type: ignore[override]
        if option == constants.HWM:
            self.set_hwm(optval)
            return
        super().setsockopt(option, optval)

    def getsockopt(self, option: int) -> Any:  # type: ignore[override]
        if option == constants.HWM:
            return self.get_hwm()
        if option in _CURVE_KEY_OPTS:
            # Z85, the form they are usually set in (libzmq's 41-byte read); pyzmq cannot read them.
            return z85.encode(super().getsockopt(option))
        return super().getsockopt(option)

    def set_string(self, option: int, optval: str, encoding: str = "utf-8") -> None:
        if not isinstance(optval, str):
            raise TypeError(f"strings only, not {type(optval)}")
        self.setsockopt(option, optval.encode(encoding))

    setsockopt_string = set_string

    def get_string(self, option: int, encoding: str = "utf-8") -> str:
        if option not in bytes_sockopts:
            raise TypeError(f"option {option} will not return a string to be decoded")
        return self.getsockopt(option).decode(encoding)

    getsockopt_string = get_string

    def set_hwm(self, value: int) -> None:
        """Sets SNDHWM and RCVHWM together."""
        self.setsockopt(SNDHWM, value)
        self.setsockopt(RCVHWM, value)

    def get_hwm(self) -> int:
        return self.getsockopt(SNDHWM)

    hwm = property(get_hwm, set_hwm)

    def subscribe(self, topic: Any) -> None:
        if isinstance(topic, str):
            topic = topic.encode("utf-8")
        self.setsockopt(SUBSCRIBE, topic)

    def unsubscribe(self, topic: Any) -> None:
        if isinstance(topic, str):
            topic = topic.encode("utf-8")
        self.setsockopt(UNSUBSCRIBE, topic)

    @property
    def last_endpoint(self) -> bytes:
        return self.getsockopt(LAST_ENDPOINT)

    def bind_to_random_port(self, addr: str, min_port: int = 49152, max_port: int = 65536,
                            max_tries: int = 100) -> int:
        """Binds to a random port on ``addr`` (e.g. ``tcp://127.0.0.1``); returns the port."""
        if min_port == 49152 and max_port == 65536:
            # Let the OS pick, like pyzmq does with the default range.
            self.bind(f"{addr}:*")
            return int(self.last_endpoint.decode().rsplit(":", 1)[-1])
        for _ in range(max_tries):
            port = random.randrange(min_port, max_port)
            try:
                self.bind(f"{addr}:{port}")
            except ZMQError as e:
                if e.errno not in (constants.EADDRINUSE, constants.EACCES if hasattr(constants, "EACCES") else 13):
                    raise
            else:
                return port
        raise ZMQBindError("Could not bind socket to random port.")

    # ----- serialisation helpers (pyzmq's) -----

    def _deserialize(self, recvd: Any, load: Callable[[Any], Any]) -> Any:
        """Applies ``load`` to what a recv returned (the asyncio socket chains a future)."""
        return load(recvd)

    def send_string(self, u: str, flags: int = 0, copy: bool = True, encoding: str = "utf-8",
                    **kwargs: Any) -> Any:
        if not isinstance(u, str):
            raise TypeError("str objects only")
        return self.send(u.encode(encoding), flags=flags, copy=copy, **kwargs)

    send_unicode = send_string

    def recv_string(self, flags: int = 0, encoding: str = "utf-8") -> Any:
        return self._deserialize(self.recv(flags=flags), lambda b: b.decode(encoding))

    recv_unicode = recv_string

    def send_pyobj(self, obj: Any, flags: int = 0, protocol: int = DEFAULT_PROTOCOL, **kwargs: Any) -> Any:
        return self.send(pickle.dumps(obj, protocol), flags=flags, **kwargs)

    def recv_pyobj(self, flags: int = 0) -> Any:
        return self._deserialize(self.recv(flags), pickle.loads)

    def send_json(self, obj: Any, flags: int = 0, **kwargs: Any) -> Any:
        send_kwargs = {k: kwargs.pop(k) for k in ("copy", "track", "routing_id", "group") if k in kwargs}
        msg = json.dumps(obj, **kwargs).encode("utf-8")
        return self.send(msg, flags=flags, **send_kwargs)

    def recv_json(self, flags: int = 0, **kwargs: Any) -> Any:
        return self._deserialize(self.recv(flags), lambda b: json.loads(b, **kwargs))

    def send_serialized(self, msg: Any, serialize: Callable[[Any], List[Any]], flags: int = 0,
                        copy: bool = True, **kwargs: Any) -> Any:
        return self.send_multipart(serialize(msg), flags=flags, copy=copy, **kwargs)

    def recv_serialized(self, deserialize: Callable[[List[Any]], Any], flags: int = 0,
                        copy: bool = True) -> Any:
        return self._deserialize(self.recv_multipart(flags, copy=copy), deserialize)

    # ----- monitoring -----

    _monitor_socket: Optional["Socket"] = None

    def monitor(self, addr: Optional[str], events: int = constants.EVENT_ALL) -> None:  # type: ignore[override]
        """Publishes this socket's connection events on a PAIR socket bound at the inproc
        ``addr`` (``zmq_socket_monitor``); ``None`` stops monitoring (EVENT_MONITOR_STOPPED is
        sent if asked for). Decode the messages with ``zmq.utils.monitor``."""
        if addr is not None and not addr:
            raise ZMQError(constants.EINVAL)  # libzmq refuses ""; only None stops
        super().monitor(addr, events)

    def get_monitor_socket(self, events: Optional[int] = None, addr: Optional[str] = None) -> "Socket":
        """A PAIR socket, connected and ready to receive this socket's events (created on the
        first call, returned again while open)."""
        if self._monitor_socket is not None:
            if not self._monitor_socket.closed:
                return self._monitor_socket
            self._monitor_socket = None
        if addr is None:
            addr = f"inproc://monitor.s-{self.FD}"
        if events is None:
            events = constants.EVENT_ALL
        self.monitor(addr, events)
        sock = self.context.socket(constants.PAIR)
        sock.connect(addr)
        self._monitor_socket = sock
        return sock

    def disable_monitor(self) -> None:
        """Stops monitoring (the socket from get_monitor_socket receives EVENT_MONITOR_STOPPED
        and stays open for the caller to read and close)."""
        self._monitor_socket = None
        self.monitor(None, 0)

    # ----- attribute-style options -----

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        opt = _SOCKOPT_NAMES.get(key.lower())
        if opt is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")
        return self.get(opt)

    def __setattr__(self, key: str, value: Any) -> None:
        if key in ("subscribe", "unsubscribe"):
            getattr(type(self), key)(self, value)
            return
        if key.startswith("_") or key in self.__dict__:
            object.__setattr__(self, key, value)
            return
        for klass in type(self).__mro__:
            if key in vars(klass):
                object.__setattr__(self, key, value)
                return
        opt = _SOCKOPT_NAMES.get(key.lower())
        if opt is None:
            raise AttributeError(f"{type(self).__name__} has no option {key!r}")
        if opt in bytes_sockopts and isinstance(value, str):
            value = value.encode("utf-8")
        self.set(opt, value)


# On CPython 3.10+ send/recv become METH_FASTCALL methods (no argument tuple per call); on 3.9
# the native methods stay as they are. Same behaviour either way (see python/src/fast.rs).
_oxmq._install_fast_methods(Socket)

__all__ = ["Socket"]
