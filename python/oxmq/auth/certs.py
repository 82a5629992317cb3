"""CURVE certificate files in CZMQ's zcert format, laid out as pyzmq writes them (only the
"by oxmq" in the first line differs).

A certificate is ZPL text: a comment banner, a ``metadata`` section, and a ``curve`` section
with ``public-key = "<z85>"`` (and ``secret-key`` in the secret file). ``create_certificates``
writes ``name.key`` (public) and ``name.key_secret`` (both keys and the metadata), which
pyzmq, CZMQ and oxmq's Rust ``Certificate`` all read.
"""

import datetime
import os
from typing import Dict, Optional, Tuple, Union

from .._security import curve_keypair

_SECRET_BANNER = """#   ****  Generated on {0} by oxmq  ****
#   ZeroMQ CURVE **Secret** Certificate
#   DO NOT PROVIDE THIS FILE TO OTHER USERS nor change its permissions.

"""

_PUBLIC_BANNER = """#   ****  Generated on {0} by oxmq  ****
#   ZeroMQ CURVE Public Certificate
#   Exchange securely, or use a secure mechanism to verify the contents
#   of this file after exchange. Store public certificates in your home
#   directory, in the .curve subdirectory.

"""

_Text = Union[str, bytes]


def _text(v: _Text, encoding: str = "utf-8") -> str:
    return v.decode(encoding) if isinstance(v, bytes) else v


def _write_key_file(path: Union[str, os.PathLike], banner: str, public_key: _Text,
                    secret_key: Optional[_Text] = None, metadata: Optional[Dict[_Text, _Text]] = None,
                    encoding: str = "utf-8") -> None:
    lines = [banner.format(datetime.datetime.now()), "metadata\n"]
    for k, v in (metadata or {}).items():
        lines.append(f"    {_text(k, encoding)} = {_text(v, encoding)}\n")
    lines.append("curve\n")
    lines.append(f'    public-key = "{_text(public_key, encoding)}"\n')
    if secret_key:
        lines.append(f'    secret-key = "{_text(secret_key, encoding)}"\n')
    # The secret file is for its owner only; create it that way rather than chmod afterwards.
    mode = 0o600 if secret_key else 0o666
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with open(fd, "w", encoding="utf8") as f:
        f.write("".join(lines))


def create_certificates(key_dir: Union[str, os.PathLike], name: str,
                        metadata: Optional[Dict[_Text, _Text]] = None) -> Tuple[str, str]:
    """Generates a key pair and writes ``key_dir/name.key`` and ``key_dir/name.key_secret``.

    Returns the two paths (public, secret). Metadata goes into the secret file, as pyzmq does.
    """
    public_key, secret_key = curve_keypair()
    base = os.path.join(key_dir, name)
    public_file, secret_file = f"{base}.key", f"{base}.key_secret"
    _write_key_file(public_file, _PUBLIC_BANNER, public_key)
    _write_key_file(secret_file, _SECRET_BANNER, public_key, secret_key=secret_key, metadata=metadata)
    return public_file, secret_file


def _value(line: bytes) -> bytes:
    """The value of a ``name = value`` ZPL line, without quotes."""
    value = line.split(b"=", 1)[1].strip()
    if value[:1] in (b'"', b"'"):
        end = value.find(value[:1], 1)
        return value[1:end] if end > 0 else value[1:]
    return value.split()[0] if value else value


def load_certificate(filename: Union[str, os.PathLike]) -> Tuple[bytes, Optional[bytes]]:
    """Reads ``(public_key, secret_key)`` (Z85 bytes; secret None in a public file).

    OSError if the file does not exist, ValueError if it has no public key.
    """
    if not os.path.exists(filename):
        raise OSError(f"Invalid certificate file: {filename}")
    public_key = secret_key = None
    with open(filename, "rb") as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(b"#"):
                continue
            name = line.split(b"=", 1)[0].strip()
            if b"=" not in line:
                continue
            if name == b"public-key":
                public_key = _value(line)
            elif name == b"secret-key":
                secret_key = _value(line)
    if public_key is None:
        raise ValueError(f"No public key found in {filename}")
    return public_key, secret_key


def load_certificates(directory: Union[str, os.PathLike] = ".") -> Dict[bytes, bool]:
    """The public keys of every ``*.key`` file in ``directory``, as ``{z85_key: True}``."""
    if not os.path.isdir(directory):
        raise OSError(f"Invalid certificate directory: {directory}")
    certs = {}
    for entry in sorted(os.listdir(directory)):
        path = os.path.join(directory, entry)
        if entry.endswith(".key") and os.path.isfile(path):
            public_key, _ = load_certificate(path)
            certs[public_key] = True
    return certs
