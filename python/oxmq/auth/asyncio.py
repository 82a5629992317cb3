"""``AsyncioAuthenticator``: the ZAP handler as an asyncio task (pyzmq's
``zmq.auth.asyncio``)."""

import asyncio
from typing import Any, Optional

from .. import asyncio as zasyncio
from .base import Authenticator


class AsyncioAuthenticator(Authenticator):
    """Serves ZAP requests from a task on the running (or given) event loop."""

    __task: Any
    _zap_socket_class = zasyncio.Socket

    def __init__(self, context: Optional[Any] = None, loop: Any = None, encoding: str = "utf-8",
                 log: Any = None) -> None:
        super().__init__(context or zasyncio.Context.instance(), encoding=encoding, log=log)
        if loop is not None:
            import warnings
            warnings.warn(f"{self.__class__.__name__}(loop) is deprecated and ignored",
                          DeprecationWarning, stacklevel=2)
        self.__task = None

    async def __handle_zap(self) -> None:
        while True:
            msg = await self.zap_socket.recv_multipart()
            await self.handle_zap_message(msg)

    def start(self) -> None:
        """Binds the ZAP socket and starts the task (call with a running loop)."""
        super().start()
        self.__task = asyncio.ensure_future(self.__handle_zap())

    def stop(self) -> None:
        """Cancels the task and closes the ZAP socket."""
        if self.__task:
            self.__task.cancel()
            self.__task = None
        super().stop()


__all__ = ["AsyncioAuthenticator"]
