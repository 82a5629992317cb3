"""``ThreadAuthenticator``: the ZAP handler on a background thread (pyzmq's
``zmq.auth.thread``).

The thread polls the ZAP socket and a PAIR pipe from the owning object; ``stop()`` sends
``TERMINATE`` down the pipe and joins. Policy methods (``allow``, ``configure_*``) may be
called from any thread while it runs: they replace whole dictionary entries, which the
handler reads once per request.
"""

import asyncio
import threading
from typing import Any, Optional

from .. import constants
from ..context import Context
from ..poll import Poller
from ..socket import Socket
from .base import Authenticator


class AuthenticationThread(threading.Thread):
    """Runs an Authenticator's request loop until told to stop on its pipe."""

    def __init__(self, authenticator: Authenticator, pipe: Any) -> None:
        super().__init__(daemon=True, name="oxmq-auth")
        self.authenticator = authenticator
        self.log = authenticator.log
        self.pipe = pipe
        self.started = threading.Event()

    def run(self) -> None:
        # handle_zap_message is a coroutine (a CURVE credentials callback may await).
        loop = asyncio.new_event_loop()
        try:
            poller = Poller()
            poller.register(self.pipe, constants.POLLIN)
            poller.register(self.authenticator.zap_socket, constants.POLLIN)
            self.started.set()
            while True:
                events = dict(poller.poll())
                if self.pipe in events:
                    if self._handle_pipe_message(self.pipe.recv_multipart()):
                        return
                zap = self.authenticator.zap_socket
                if zap in events:
                    loop.run_until_complete(self.authenticator.handle_zap_message(zap.recv_multipart()))
        finally:
            self.pipe.close()
            loop.close()

    def _handle_pipe_message(self, msg: list) -> bool:
        if msg[0] == b"TERMINATE":
            return True
        self.log.error("Invalid auth command from API: %r", msg[0])
        self.pipe.send(b"ERROR")
        return False


class ThreadAuthenticator(Authenticator):
    """Serves ZAP requests from a background thread."""

    pipe: Any
    pipe_endpoint: str = ""
    thread: Optional[AuthenticationThread]

    def __init__(self, context: Optional[Context] = None, encoding: str = "utf-8",
                 log: Any = None) -> None:
        super().__init__(context=context, encoding=encoding, log=log)
        self.pipe = None
        self.pipe_endpoint = f"inproc://oxmq.auth.{id(self)}.inproc"
        self.thread = None

    def start(self) -> None:
        """Binds the ZAP socket and starts the thread (ZMQError EADDRINUSE if the context
        already has a ZAP handler)."""
        super().start()
        self.pipe = self.context.socket(constants.PAIR, socket_class=Socket)
        self.pipe.linger = 1
        self.pipe.bind(self.pipe_endpoint)
        thread_pipe = self.context.socket(constants.PAIR, socket_class=Socket)
        thread_pipe.linger = 1
        thread_pipe.connect(self.pipe_endpoint)
        self.thread = AuthenticationThread(self, thread_pipe)
        self.thread.start()
        if not self.thread.started.wait(timeout=10):
            raise RuntimeError("Authenticator thread failed to start")

    def stop(self) -> None:
        """Stops the thread and closes the sockets. Idempotent."""
        if self.pipe:
            self.pipe.send(b"TERMINATE")
            if self.is_alive():
                self.thread.join()
            self.thread = None
            self.pipe.close()
            self.pipe = None
        super().stop()

    def is_alive(self) -> bool:
        """True while the handler thread runs."""
        return bool(self.thread and self.thread.is_alive())

    def __del__(self) -> None:
        try:
            self.stop()
        except Exception:
            pass


__all__ = ["ThreadAuthenticator"]
