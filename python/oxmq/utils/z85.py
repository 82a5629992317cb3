"""Z85 (ZeroMQ RFC 32): binary ↔ printable text, 4 bytes ↔ 5 characters."""

import struct
from typing import Union

Z85CHARS = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
Z85MAP = {c: idx for idx, c in enumerate(Z85CHARS)}

_85s = [85 ** i for i in range(5)][::-1]


def encode(rawbytes: bytes) -> bytes:
    """Encodes bytes (length a multiple of 4) as Z85."""
    rawbytes = bytes(rawbytes)
    if len(rawbytes) % 4:
        raise ValueError(f"length must be multiple of 4, not {len(rawbytes)}")
    nvalues = len(rawbytes) // 4
    values = struct.unpack(f">{nvalues:d}I", rawbytes)
    encoded = bytearray()
    for v in values:
        for offset in _85s:
            encoded.append(Z85CHARS[(v // offset) % 85])
    return bytes(encoded)


def decode(z85bytes: Union[bytes, str]) -> bytes:
    """Decodes Z85 text (length a multiple of 5) to bytes."""
    if isinstance(z85bytes, str):
        try:
            z85bytes = z85bytes.encode("ascii")
        except UnicodeEncodeError:
            raise ValueError("string argument should contain only ASCII characters")
    if len(z85bytes) % 5:
        raise ValueError(f"Z85 length must be multiple of 5, not {len(z85bytes)}")
    nvalues = len(z85bytes) // 5
    values = []
    for i in range(0, len(z85bytes), 5):
        value = 0
        for j, offset in enumerate(_85s):
            try:
                value += Z85MAP[z85bytes[i + j]] * offset
            except KeyError:
                raise ValueError(f"invalid Z85 character at position {i + j}")
        if value > 0xFFFFFFFF:
            raise ValueError("Z85 group out of range")
        values.append(value)
    return struct.pack(f">{nvalues:d}I", *values)


__all__ = ["encode", "decode"]
