"""ZeroMQ authentication (pyzmq's ``zmq.auth``): ZAP handlers and CURVE certificate files.

``Authenticator`` (``base``) holds the policy and answers one ZAP request (RFC 27) at a time;
``ThreadAuthenticator`` (``thread``) serves it from a background thread,
``AsyncioAuthenticator`` (``asyncio``) from an asyncio task. Either binds
``inproc://zeromq.zap.01`` in its context, so PLAIN and CURVE servers (and NULL servers with a
ZAP_DOMAIN) created in that context ask it about every new client.
"""

from .base import Authenticator, CURVE_ALLOW_ANY  # noqa: F401
from .certs import create_certificates, load_certificate, load_certificates  # noqa: F401

__all__ = ["Authenticator", "CURVE_ALLOW_ANY", "create_certificates", "load_certificate",
           "load_certificates"]
