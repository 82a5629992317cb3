"""The ZAP handler's policy and request handling (pyzmq's ``zmq.auth.base``).

``Authenticator`` does not run by itself: ``start()`` binds the ZAP socket and something must
feed each request it receives to ``handle_zap_message`` (``ThreadAuthenticator`` and
``AsyncioAuthenticator`` do). The rules are pyzmq's and CZMQ's zauth:

* If any address is allowed, only allowed addresses pass; otherwise denied addresses fail.
  A failing address is refused whatever the mechanism.
* NULL passes when the address did not fail, and (oxmq's, over ``tls://`` or ``wss://`` with a
  client certificate, whose subject a NULL request carries as its one credentials frame) when
  the subject did not fail either: with a subject allow list (``allow_subjects``) only its
  subjects pass, a request without a subject included; otherwise a denied subject fails.
* PLAIN and CURVE must authenticate even from an allowed address, against the configuration
  of the request's domain (an empty domain means ``*``).
* The reply's User-Id is the username for PLAIN, the client key in Z85 for CURVE
  (``curve_user_id``, overridable), the certificate subject or else ``anonymous`` for NULL.
"""

import inspect
import logging
import os
from typing import Any, Dict, Optional, Set, Tuple

from .. import constants
from ..context import Context
from ..socket import Socket
from ..utils import z85
from .certs import load_certificates

#: Pass as ``location`` to ``configure_curve`` to accept any client key.
CURVE_ALLOW_ANY = "*"
VERSION = b"1.0"
ZAP_ENDPOINT = "inproc://zeromq.zap.01"


class Authenticator:
    """Answers ZAP requests from a context's servers (RFC 27) with a configurable policy."""

    context: Context
    encoding: str
    allow_any: bool
    credentials_providers: Dict[str, Any]
    zap_socket: Any
    passwords: Dict[str, Dict[str, str]]
    certs: Dict[str, Dict[bytes, Any]]
    log: Any
    #: The class of the ZAP socket (AsyncioAuthenticator uses an asyncio socket).
    _zap_socket_class: Any = Socket

    def __init__(self, context: Optional[Context] = None, encoding: str = "utf-8",
                 log: Any = None) -> None:
        self.context = context or Context.instance()
        self.encoding = encoding
        self.allow_any = False
        self.credentials_providers = {}
        self.zap_socket = None
        self._allowed: Set[str] = set()
        self._denied: Set[str] = set()
        self._allowed_subjects: Set[str] = set()
        self._denied_subjects: Set[str] = set()
        self.passwords = {}
        self.certs = {}
        self.log = log or logging.getLogger("zmq.auth")

    # ----- life -----

    def start(self) -> None:
        """Binds the ZAP socket (a REP, as RFC 27 describes) in the context."""
        self.zap_socket = self.context.socket(constants.REP, socket_class=self._zap_socket_class)
        self.zap_socket.linger = 1
        self.zap_socket.bind(ZAP_ENDPOINT)
        self.log.debug("Starting")

    def stop(self) -> None:
        """Closes the ZAP socket."""
        if self.zap_socket:
            self.zap_socket.close()
        self.zap_socket = None

    # ----- policy -----

    def allow(self, *addresses: str) -> None:
        """Allows these IP addresses; once any is allowed, all others are refused."""
        if self._denied:
            raise ValueError("Only use allow or deny, not both")
        self.log.debug("Allowing %s", ",".join(addresses))
        self._allowed.update(addresses)

    def deny(self, *addresses: str) -> None:
        """Refuses these IP addresses (all others pass the address check)."""
        if self._allowed:
            raise ValueError("Only use allow or deny, not both")
        self.log.debug("Denying %s", ",".join(addresses))
        self._denied.update(addresses)

    def allow_subjects(self, *subjects: str) -> None:
        """oxmq's: accepts NULL only from TLS peers whose certificate subject is one of these
        (RFC 4514 text as the ``TLS-Peer-Subject`` property gives it, e.g.
        ``"CN=client-7,O=Example"``). PLAIN and CURVE are not affected."""
        self._allowed_subjects.update(subjects)

    def deny_subjects(self, *subjects: str) -> None:
        """oxmq's: refuses NULL from TLS peers with these certificate subjects (used only
        while no subject is allowed)."""
        self._denied_subjects.update(subjects)

    def _subject_refusal(self, subject: Optional[str]) -> Optional[bytes]:
        if self._allowed_subjects:
            return None if subject in self._allowed_subjects else b"Certificate subject not allowed"
        return b"Certificate subject denied" if subject in self._denied_subjects else None

    def configure_plain(self, domain: str = "*", passwords: Optional[Dict[str, str]] = None) -> None:
        """Sets the PLAIN users of ``domain``: ``{username: password}`` (an empty or None
        mapping leaves the domain as it was, as in pyzmq)."""
        if passwords:
            self.passwords[domain] = dict(passwords)
        self.log.debug("Configure plain: %s", domain)

    def configure_curve(self, domain: str = "*", location: Any = ".") -> None:
        """Accepts in ``domain`` the CURVE keys of the ``*.key`` certificates in directory
        ``location``, or any key if ``location`` is ``CURVE_ALLOW_ANY``. Call again to reload.
        """
        self.log.debug("Configure curve: %s[%s]", domain, location)
        if location == CURVE_ALLOW_ANY:
            self.allow_any = True
        else:
            self.allow_any = False
            try:
                self.certs[domain] = load_certificates(os.fspath(location))
            except (OSError, ValueError) as e:
                # pyzmq logs and keeps the previous keys; so does this.
                self.log.error("Failed to load CURVE certs from %s: %s", location, e)

    def configure_curve_callback(self, domain: str = "*", credentials_provider: Any = None) -> None:
        """Asks ``credentials_provider.callback(domain, key)`` (True to accept; may be a
        coroutine function) about each CURVE key in ``domain``."""
        self.allow_any = False
        if credentials_provider is not None:
            self.credentials_providers[domain] = credentials_provider
        else:
            self.log.error("None credentials_provider provided for domain:%s", domain)

    def curve_user_id(self, client_public_key: bytes) -> str:
        """The User-Id for an accepted CURVE key: the key in Z85 (override to map keys to
        names)."""
        return z85.encode(client_public_key).decode("ascii")

    def configure_gssapi(self, domain: str = "*", location: Optional[str] = None) -> None:
        """GSSAPI is not supported by oxmq (no such mechanism): always raises."""
        raise NotImplementedError("GSSAPI is not implemented in oxmq")

    # ----- requests -----

    async def handle_zap_message(self, msg: list) -> None:
        """Answers one ZAP request (the frames after the envelope) on ``zap_socket``."""
        if len(msg) < 6:
            self.log.error("Invalid ZAP message, not enough frames: %r", msg)
            # A REP must answer before it can read again; echo whatever request id there is.
            self._send_zap_reply(msg[1] if len(msg) >= 2 else b"", b"400", b"Not enough frames")
            return
        version, request_id, domain_b, address_b, identity, mechanism = msg[:6]
        credentials = msg[6:]
        domain = domain_b.decode(self.encoding, "replace")
        address = address_b.decode(self.encoding, "replace")
        if version != VERSION:
            self.log.error("Invalid ZAP version: %r", msg)
            self._send_zap_reply(request_id, b"400", b"Invalid version")
            return
        self.log.debug("version: %r, request_id: %r, domain: %r, address: %r, identity: %r, "
                       "mechanism: %r", version, request_id, domain, address, identity, mechanism)

        allowed = False
        denied = False
        reason = b"NO ACCESS"
        if self._allowed:
            if address in self._allowed:
                allowed = True
            else:
                denied = True
                reason = b"Address not allowed"
        elif self._denied:
            if address in self._denied:
                denied = True
                reason = b"Address denied"
            else:
                allowed = True

        username = "anonymous"
        if not denied:
            if mechanism == b"NULL":
                subject = credentials[0].decode(self.encoding, "replace") if credentials else None
                refusal = self._subject_refusal(subject)
                if refusal:
                    allowed, reason = False, refusal
                else:
                    allowed = True
                    username = subject or username
            elif mechanism == b"PLAIN":
                if len(credentials) != 2:
                    self.log.error("Invalid PLAIN credentials: %r", credentials)
                    self._send_zap_reply(request_id, b"400", b"Invalid credentials")
                    return
                username, password = (c.decode(self.encoding, "replace") for c in credentials)
                allowed, reason = self._authenticate_plain(domain, username, password)
            elif mechanism == b"CURVE":
                if len(credentials) != 1 or len(credentials[0]) != 32:
                    self.log.error("Invalid CURVE credentials: %r", credentials)
                    self._send_zap_reply(request_id, b"400", b"Invalid credentials")
                    return
                key = credentials[0]
                allowed, reason = await self._authenticate_curve(domain, key)
                if allowed:
                    username = self.curve_user_id(key)
            elif mechanism == b"GSSAPI":
                allowed, reason = self._authenticate_gssapi(domain, credentials[0] if credentials else b"")
            else:
                # Not a mechanism this handler knows how to check.
                allowed, reason = False, b"Unsupported mechanism"

        if allowed:
            self._send_zap_reply(request_id, b"200", b"OK", username)
        else:
            self._send_zap_reply(request_id, b"400", reason)

    def _authenticate_plain(self, domain: str, username: str, password: str) -> Tuple[bool, bytes]:
        if not self.passwords:
            self.log.debug("PLAIN denied: no passwords defined")
            return False, b"No passwords defined"
        domain = domain or "*"
        if domain not in self.passwords:
            return False, b"Invalid domain"
        users = self.passwords[domain]
        if username not in users:
            return False, b"Invalid username"
        if password != users[username]:
            return False, b"Invalid password"
        return True, b"OK"

    async def _authenticate_curve(self, domain: str, client_key: bytes) -> Tuple[bool, bytes]:
        if self.allow_any:
            return True, b"OK"
        domain = domain or "*"
        provider = self.credentials_providers.get(domain)
        if provider is not None:
            verdict = provider.callback(domain, client_key)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            return (True, b"OK") if verdict else (False, b"Unknown key")
        if domain not in self.certs:
            return False, b"Unknown domain"
        if self.certs[domain].get(z85.encode(client_key)):
            return True, b"OK"
        return False, b"Unknown key"

    def _authenticate_gssapi(self, domain: str, principal: bytes) -> Tuple[bool, bytes]:
        return False, b"Unsupported mechanism"

    def _send_zap_reply(self, request_id: bytes, status_code: bytes, status_text: bytes,
                        user_id: Any = "anonymous") -> None:
        """Sends ``[version, request id, status code, status text, user id, metadata]``."""
        user_id = user_id if status_code == b"200" else b""
        if isinstance(user_id, str):
            user_id = user_id.encode(self.encoding, "replace")
        metadata = b""
        self.log.debug("ZAP reply code=%s text=%s", status_code, status_text)
        self.zap_socket.send_multipart([VERSION, request_id, status_code, status_text, user_id, metadata])
