"""Utilities (pyzmq's ``zmq.utils``): z85, jsonapi and monitor."""

from . import jsonapi, monitor, z85  # noqa: F401
