"""JSON helpers with pyzmq's ``zmq.utils.jsonapi`` API (bytes in, bytes out)."""

import json
from typing import Any


def dumps(o: Any, **kwargs: Any) -> bytes:
    return json.dumps(o, **kwargs).encode("utf8")


def loads(s: Any, **kwargs: Any) -> Any:
    if isinstance(s, (bytes, bytearray, memoryview)):
        s = bytes(s).decode("utf8")
    return json.loads(s, **kwargs)


__all__ = ["dumps", "loads"]
