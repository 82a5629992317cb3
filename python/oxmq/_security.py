"""CURVE key helpers with pyzmq's signatures: Z85 ``bytes`` in and out."""

from typing import Tuple, Union

from . import _oxmq


def curve_keypair() -> Tuple[bytes, bytes]:
    """A new CURVE key pair ``(public, secret)``, each 40 Z85 characters."""
    return _oxmq.curve_keypair()


def curve_public(secret_key: Union[bytes, str]) -> bytes:
    """The Z85 public key of a Z85 secret key.

    ValueError if the key is not 40 characters (as pyzmq); ZMQError(EINVAL) if they are not
    valid Z85.
    """
    if isinstance(secret_key, str):
        secret_key = secret_key.encode("utf8")
    if len(secret_key) != 40:
        raise ValueError("secret key must be a 40 byte z85 encoded string")
    return _oxmq.curve_public(bytes(secret_key))
