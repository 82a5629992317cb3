"""Decoding socket-monitor events (pyzmq's ``zmq.utils.monitor``).

A monitor message (version 1, as ``Socket.monitor`` sends) has two frames: 6 bytes holding the
event number (16 bits) and its value (32 bits), native endian, and the endpoint.
"""

import struct
from typing import Any, Awaitable, Dict, List, Union

from ..constants import Event

_HEAD = struct.Struct("=hi")


def parse_monitor_message(msg: List[bytes]) -> Dict[str, Any]:
    """Decodes one monitor message into ``{'event': Event, 'value': int, 'endpoint': bytes}``.

    Raises RuntimeError for anything that is not a two-frame version-1 event (as pyzmq).
    """
    if len(msg) != 2 or len(msg[0]) != _HEAD.size:
        raise RuntimeError(f"Invalid event message format: {msg}")
    event_id, value = _HEAD.unpack(bytes(msg[0]))
    return {"event": Event(event_id & 0xFFFF), "value": value, "endpoint": bytes(msg[1])}


async def _parse_async(pending: Awaitable[List[bytes]]) -> Dict[str, Any]:
    return parse_monitor_message(await pending)


def recv_monitor_message(socket: Any, flags: int = 0) -> Union[Dict[str, Any], Awaitable[Dict[str, Any]]]:
    """Receives and decodes the next event from a monitor socket (from
    ``get_monitor_socket``). With a ``zmq.asyncio`` socket it returns an awaitable."""
    msg = socket.recv_multipart(flags)
    if isinstance(msg, Awaitable):
        return _parse_async(msg)
    return parse_monitor_message(msg)


__all__ = ["parse_monitor_message", "recv_monitor_message"]
