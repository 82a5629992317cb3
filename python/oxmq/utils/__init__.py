"""Utilities (pyzmq's ``zmq.utils``): z85 and jsonapi."""

from . import jsonapi, z85  # noqa: F401
