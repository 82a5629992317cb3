"""PLAIN/CURVE through the Python API: key helpers, security options, certificate files shared
with pyzmq, and the ``oxmq.auth`` authenticators answering RFC 27 requests sent by a DEALER
over inproc (as a server's session sends them)."""

import asyncio
import os

import pytest

import oxmq
import oxmq.auth
from oxmq.auth.asyncio import AsyncioAuthenticator
from oxmq.auth.base import Authenticator
from oxmq.auth.thread import ThreadAuthenticator
from oxmq.utils import z85

# libzmq's test vector (tests/test_security_curve.cpp).
SECRET = b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
PUBLIC = b"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"


def test_curve_helpers():
    assert oxmq.has("curve")
    public, secret = oxmq.curve_keypair()
    assert isinstance(public, bytes) and len(public) == 40 and len(secret) == 40
    assert oxmq.curve_public(secret) == public
    assert oxmq.curve_public(SECRET) == PUBLIC
    assert oxmq.curve_public(SECRET.decode()) == PUBLIC
    assert oxmq.curve_keypair() != (public, secret)
    with pytest.raises(ValueError):
        oxmq.curve_public(b"short")
    with pytest.raises(oxmq.ZMQError) as e:
        oxmq.curve_public(b"~" * 40)
    assert e.value.errno == oxmq.EINVAL


def test_curve_public_matches_pyzmq():
    zmq = pytest.importorskip("zmq")
    for _ in range(10):
        public, secret = oxmq.curve_keypair()
        assert zmq.curve_public(secret) == public
        public, secret = zmq.curve_keypair()
        assert oxmq.curve_public(secret) == public


def test_security_options(ctx):
    s = ctx.socket(oxmq.DEALER)
    assert s.mechanism == oxmq.NULL
    s.curve_secretkey = SECRET
    s.curve_publickey = PUBLIC
    s.curve_server = True
    assert s.mechanism == oxmq.CURVE and s.curve_server == 1
    # Keys read back as Z85, however they were set.
    assert s.curve_publickey == PUBLIC and s.curve_secretkey == SECRET
    s.curve_serverkey = z85.decode(PUBLIC)
    assert s.curve_serverkey == PUBLIC and s.curve_server == 0
    with pytest.raises(oxmq.ZMQError):
        s.curve_serverkey = b"not a key"
    s.plain_username = b"admin"
    s.plain_password = b"secret"
    assert s.mechanism == oxmq.PLAIN and s.plain_server == 0
    assert s.plain_username == b"admin" and s.plain_password == b"secret"
    assert s.getsockopt_string(oxmq.PLAIN_USERNAME) == "admin"
    s.plain_server = True
    assert s.plain_server == 1
    with pytest.raises(oxmq.ZMQError):
        s.mechanism = oxmq.CURVE
    s.close()


def test_curve_connection(ctx):
    spub, ssec = oxmq.curve_keypair()
    cpub, csec = oxmq.curve_keypair()
    server = ctx.socket(oxmq.REP)
    server.curve_server = True
    server.curve_secretkey = ssec
    client = ctx.socket(oxmq.REQ)
    client.curve_serverkey = spub
    client.curve_publickey = cpub
    client.curve_secretkey = csec
    for s in (server, client):
        s.linger = 0
        s.rcvtimeo = 5000
    port = server.bind_to_random_port("tcp://127.0.0.1")
    client.connect(f"tcp://127.0.0.1:{port}")
    client.send(b"hello")
    assert server.recv() == b"hello"
    server.send(b"world")
    assert client.recv() == b"world"


# ----- certificate files -----

def test_certificates_round_trip(tmp_path):
    pub_file, sec_file = oxmq.auth.create_certificates(tmp_path, "srv", metadata={"name": "srv"})
    assert pub_file == str(tmp_path / "srv.key") and sec_file == str(tmp_path / "srv.key_secret")
    public, secret = oxmq.auth.load_certificate(sec_file)
    assert oxmq.curve_public(secret) == public
    assert oxmq.auth.load_certificate(pub_file) == (public, None)
    assert oct(os.stat(sec_file).st_mode & 0o777) == "0o600"
    oxmq.auth.create_certificates(tmp_path, "cli")
    certs = oxmq.auth.load_certificates(tmp_path)
    assert len(certs) == 2 and certs[public] is True
    text = open(sec_file).read().splitlines()
    assert text[4:] == ["metadata", "    name = srv", "curve", f'    public-key = "{public.decode()}"',
                        f'    secret-key = "{secret.decode()}"']
    with pytest.raises(OSError):
        oxmq.auth.load_certificate(tmp_path / "missing.key")
    (tmp_path / "empty.key").write_text("metadata\ncurve\n")
    with pytest.raises(ValueError):
        oxmq.auth.load_certificate(tmp_path / "empty.key")
    with pytest.raises(OSError):
        oxmq.auth.load_certificates(tmp_path / "nodir")


def test_certificates_shared_with_pyzmq(tmp_path):
    zmq = pytest.importorskip("zmq")
    import zmq.auth as zauth
    # pyzmq writes, oxmq reads.
    _, sec = zauth.create_certificates(tmp_path, "py")
    assert oxmq.auth.load_certificate(sec) == zauth.load_certificate(sec)
    # oxmq writes, pyzmq reads; the layout is pyzmq's after the dated first line.
    pub2, sec2 = oxmq.auth.create_certificates(tmp_path, "ox")
    assert zauth.load_certificate(sec2) == oxmq.auth.load_certificate(sec2)
    assert zauth.load_certificates(str(tmp_path)) == oxmq.auth.load_certificates(tmp_path)
    # Same lines but the first (date, tool) and the key lines (different key pairs).
    for ours, theirs, keys in ((pub2, tmp_path / "py.key", 1), (sec2, tmp_path / "py.key_secret", 2)):
        a = open(ours).read().splitlines()
        b = open(theirs).read().splitlines()
        assert len(a) == len(b)
        assert a[1:-keys] == b[1:-keys]
        assert [x.split("=")[0] for x in a[-keys:]] == [x.split("=")[0] for x in b[-keys:]]


# ----- the handler, fed RFC 27 requests -----

def zap_client(ctx):
    s = ctx.socket(oxmq.DEALER)
    s.linger = 0
    s.rcvtimeo = 5000
    s.connect("inproc://zeromq.zap.01")
    return s


def ask(s, rid, domain, address, mechanism, *creds):
    s.send_multipart([b"", b"1.0", rid, domain, address, b"ID", mechanism, *creds])
    return reply(s)


def reply(s):
    r = s.recv_multipart()
    assert r[0] == b""
    assert r[1] == b"1.0" and len(r) == 7, r
    return r[2], r[3], r[4], r[5]


@pytest.fixture
def thread_auth(ctx):
    auth = ThreadAuthenticator(ctx)
    auth.start()
    yield auth
    auth.stop()
    assert not auth.is_alive()


def test_thread_authenticator_addresses_and_plain(ctx, thread_auth):
    c = zap_client(ctx)
    assert ask(c, b"1", b"", b"127.0.0.1", b"NULL") == (b"1", b"200", b"OK", b"anonymous")
    thread_auth.deny("10.0.0.1")
    assert ask(c, b"2", b"", b"10.0.0.1", b"NULL")[1:3] == (b"400", b"Address denied")
    with pytest.raises(ValueError):
        thread_auth.allow("127.0.0.1")
    assert ask(c, b"3", b"", b"10.0.0.1", b"PLAIN", b"u", b"p")[1:3] == (b"400", b"Address denied")
    assert ask(c, b"4", b"", b"127.0.0.2", b"PLAIN", b"u", b"p")[1:3] == (b"400", b"No passwords defined")
    thread_auth.configure_plain("*", {"admin": "secret"})
    assert ask(c, b"5", b"", b"127.0.0.2", b"PLAIN", b"admin", b"secret") == (b"5", b"200", b"OK", b"admin")
    assert ask(c, b"6", b"*", b"127.0.0.2", b"PLAIN", b"admin", b"bad")[1:4] == (b"400", b"Invalid password", b"")
    assert ask(c, b"7", b"", b"127.0.0.2", b"PLAIN", b"eve", b"secret")[1:3] == (b"400", b"Invalid username")
    assert ask(c, b"8", b"dom", b"127.0.0.2", b"PLAIN", b"admin", b"secret")[1:3] == (b"400", b"Invalid domain")
    assert ask(c, b"9", b"", b"127.0.0.2", b"PLAIN", b"admin")[1:3] == (b"400", b"Invalid credentials")
    assert ask(c, b"10", b"", b"127.0.0.2", b"FOO")[1:3] == (b"400", b"Unsupported mechanism")
    c.close()


def test_thread_authenticator_curve_certs_and_reload(ctx, thread_auth, tmp_path):
    c = zap_client(ctx)
    pub_file, _ = oxmq.auth.create_certificates(tmp_path, "alice")
    alice, _ = oxmq.auth.load_certificate(pub_file)
    bob, _ = oxmq.curve_keypair()
    thread_auth.configure_curve("*", tmp_path)
    r = ask(c, b"1", b"", b"127.0.0.1", b"CURVE", z85.decode(alice))
    assert r == (b"1", b"200", b"OK", alice)
    assert ask(c, b"2", b"", b"127.0.0.1", b"CURVE", z85.decode(bob))[1:3] == (b"400", b"Unknown key")
    assert ask(c, b"3", b"x", b"127.0.0.1", b"CURVE", z85.decode(bob))[1:3] == (b"400", b"Unknown domain")
    assert ask(c, b"4", b"", b"127.0.0.1", b"CURVE", b"short")[1:3] == (b"400", b"Invalid credentials")
    # Remove alice's file, reload by configuring again.
    os.remove(pub_file)
    thread_auth.configure_curve("*", tmp_path)
    assert ask(c, b"5", b"", b"127.0.0.1", b"CURVE", z85.decode(alice))[1:3] == (b"400", b"Unknown key")
    thread_auth.configure_curve("*", oxmq.auth.CURVE_ALLOW_ANY)
    assert ask(c, b"6", b"", b"127.0.0.1", b"CURVE", z85.decode(bob))[1:4] == (b"200", b"OK", bob)

    class Provider:
        def __init__(self):
            self.seen = []

        async def callback(self, domain, key):
            self.seen.append((domain, key))
            return key == z85.decode(bob)

    p = Provider()
    thread_auth.configure_curve_callback("*", credentials_provider=p)
    assert ask(c, b"7", b"", b"127.0.0.1", b"CURVE", z85.decode(bob))[1] == b"200"
    assert ask(c, b"8", b"", b"127.0.0.1", b"CURVE", z85.decode(alice))[1] == b"400"
    assert p.seen == [("*", z85.decode(bob)), ("*", z85.decode(alice))]
    c.close()


def test_thread_authenticator_malformed(ctx, thread_auth):
    c = zap_client(ctx)
    c.send_multipart([b"", b"1.0", b"short", b"dom"])
    assert reply(c)[:3] == (b"short", b"400", b"Not enough frames")
    c.send_multipart([b"", b"2.0", b"v2", b"", b"127.0.0.1", b"", b"NULL"])
    assert reply(c)[:3] == (b"v2", b"400", b"Invalid version")
    # With nothing to echo, the handler still answers (a REP must) and goes on serving.
    c.send_multipart([b"", b"1.0"])
    assert reply(c)[:2] == (b"", b"400")
    assert ask(c, b"ok", b"", b"127.0.0.1", b"NULL")[:2] == (b"ok", b"200")
    c.close()


def test_one_handler_per_context(ctx, thread_auth):
    other = ThreadAuthenticator(ctx)
    with pytest.raises(oxmq.ZMQError) as e:
        other.start()
    assert e.value.errno == oxmq.EADDRINUSE
    other.stop()


def test_base_authenticator_driven_by_hand(ctx):
    auth = Authenticator(ctx)
    auth.start()
    auth.configure_plain(passwords={"u": "p"})
    c = zap_client(ctx)
    c.send_multipart([b"", b"1.0", b"7", b"", b"127.0.0.1", b"", b"PLAIN", b"u", b"p"])
    msg = auth.zap_socket.recv_multipart()
    asyncio.run(auth.handle_zap_message(msg))
    assert reply(c) == (b"7", b"200", b"OK", b"u")
    auth.stop()
    c.close()


@pytest.mark.asyncio
async def test_asyncio_authenticator():
    import oxmq.asyncio as zasyncio
    ctx = zasyncio.Context()
    auth = AsyncioAuthenticator(ctx)
    auth.start()
    auth.allow("127.0.0.1")
    c = ctx.socket(oxmq.DEALER)
    c.linger = 0
    c.connect("inproc://zeromq.zap.01")
    await c.send_multipart([b"", b"1.0", b"a", b"", b"127.0.0.1", b"", b"NULL"])
    r = await asyncio.wait_for(c.recv_multipart(), 5)
    assert r[1:6] == [b"1.0", b"a", b"200", b"OK", b"anonymous"]
    await c.send_multipart([b"", b"1.0", b"b", b"", b"10.1.1.1", b"", b"NULL"])
    r = await asyncio.wait_for(c.recv_multipart(), 5)
    assert r[3:5] == [b"400", b"Address not allowed"]
    auth.stop()
    c.close()
    ctx.destroy(linger=0)


def _certificates(tmp_path):
    """A CA, a server certificate for 127.0.0.1 and two client certificates, made with openssl."""
    import shutil
    import subprocess

    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed (scripts/test-all.sh installs it)")

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=60, cwd=tmp_path)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
        "-subj", "/CN=Test CA", "-keyout", "ca.key", "-out", "ca.pem")
    for name, ext in [("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth"),
                      ("client-7", "extendedKeyUsage=clientAuth"), ("client-8", "extendedKeyUsage=clientAuth")]:
        (tmp_path / f"{name}.ext").write_text(ext + "\n")
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-subj", f"/O=oxmq tests/CN={name}", "-keyout", f"{name}.key", "-out", f"{name}.csr")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", f"{name}.ext", "-out", f"{name}.pem")
    return {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix in (".pem", ".key")}


@pytest.mark.timeout(60)
def test_authenticator_allows_and_denies_tls_subjects(ctx, tmp_path):
    """Over tls:// with client certificates, a NULL server's ZAP request carries the subject:
    the authenticator's subject lists decide, and the subject becomes the User-Id."""
    pem = _certificates(tmp_path)
    auth = ThreadAuthenticator(ctx)
    auth.start()
    try:
        for allow, deny, passes in [(("CN=client-7,O=oxmq tests",), (), "client-7"),
                                    ((), ("CN=client-7,O=oxmq tests",), "client-8")]:
            auth._allowed_subjects.clear()
            auth._denied_subjects.clear()
            auth.allow_subjects(*allow)
            auth.deny_subjects(*deny)
            server = ctx.socket(oxmq.PULL)
            server.zap_domain = b"tls"
            server.setsockopt(oxmq.WSS_CERT_PEM, pem["server.pem"])
            server.setsockopt(oxmq.WSS_KEY_PEM, pem["server.key"])
            server.setsockopt(oxmq.WSS_TRUST_PEM, pem["ca.pem"])  # asks for client certificates
            server.bind("tls://127.0.0.1:*")
            endpoint = server.last_endpoint.decode()
            clients = []
            for name in ("client-7", "client-8"):
                c = ctx.socket(oxmq.PUSH)
                c.linger = 0
                c.setsockopt(oxmq.WSS_TRUST_PEM, pem["ca.pem"])
                c.setsockopt(oxmq.WSS_CERT_PEM, pem[f"{name}.pem"])
                c.setsockopt(oxmq.WSS_KEY_PEM, pem[f"{name}.key"])
                c.connect(endpoint)
                clients.append((name, c))
            for name, c in clients:
                try:
                    c.send(name.encode(), oxmq.NOBLOCK)
                except oxmq.Again:
                    pass  # the refused one's pipe may be gone already
            assert server.poll(10000), "the allowed client's message"
            frame = server.recv(copy=False)
            assert frame.bytes == passes.encode()
            subject = f"CN={passes},O=oxmq tests"
            assert frame.get("TLS-Peer-Subject") == subject
            assert frame.get("User-Id") == subject
            assert not server.poll(300), "the refused client's message must not arrive"
            for _, c in clients:
                c.close()
            server.close(linger=0)
    finally:
        auth.stop()
