package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.*;

/**
 * tls:// and wss:// through the binding: the WSS_* options and the TLS-Peer-Subject property
 * ({@link Frame#property}), over loopback with certificates the openssl CLI makes at test time
 * ({@link TestCertificates}).
 */
@Timeout(60)
class TlsTest {
    private static final int DEADLINE_MS = 15_000;
    private static final int QUIET_MS = 300;

    private static boolean readable(Socket s, int timeoutMs) {
        try (Poller p = new Poller(1)) {
            p.register(s, Zmq.POLLIN);
            return p.poll(timeoutMs) == 1;
        }
    }

    /** The first handshake outcome {@code m} reports within the deadline. */
    private static MonitorEvent handshakeOutcome(Monitor m) {
        MonitorEvent e = m.next(DEADLINE_MS);
        assertNotNull(e, "a handshake outcome within the deadline");
        return e;
    }

    /** Connects {@code client} to {@code ep}, whose handshake must fail: HANDSHAKE_FAILED_AUTH
     *  400 at {@code m} (the monitor of the side that refuses), and nothing reaches {@code server}. */
    private static void assertRefused(Socket client, String ep, Monitor m, Socket server) {
        client.set(SocketOption.LINGER, 0);
        client.connect(ep);
        client.send("never", Zmq.DONTWAIT); // false (EAGAIN) once the refused session ended its pipe
        MonitorEvent e = handshakeOutcome(m);
        assertEquals(MonitorEvent.HANDSHAKE_FAILED_AUTH, e.event(), e.toString());
        assertEquals(400, e.value());
        assertFalse(readable(server, QUIET_MS), "nothing may arrive");
    }

    /** A PUSH that trusts Test CA and presents the client certificate. */
    private static Socket certifiedClient(Context ctx) {
        Socket push = ctx.socket(SocketType.PUSH);
        push.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
        TestCertificates.present(push);
        push.set(SocketOption.LINGER, 0);
        return push;
    }

    /** Connects {@code push} to {@code ep}, sends {@code body}, and receives it at {@code pull} into {@code f}. */
    private static void deliver(Socket push, String ep, Socket pull, Frame f, String body) {
        push.connect(ep);
        push.send(body, 0);
        assertTrue(readable(pull, DEADLINE_MS), "message within the deadline");
        assertTrue(pull.recv(f, 0));
        assertEquals(body, f.toStringUtf8());
    }

    /** Makes {@code pull} a mutual-TLS server (certificate, key, Test CA for its clients) with
     *  {@code zapDomain} (none if null), bound at tls://127.0.0.1:*; its endpoint. */
    private static String mutualTlsServer(Socket pull, String zapDomain) {
        TestCertificates.serve(pull);
        pull.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem")); // requires client certificates
        if (zapDomain != null) pull.set(SocketOption.ZAP_DOMAIN, zapDomain);
        return pull.bind("tls://127.0.0.1:*");
    }

    private static final int OUTCOMES = MonitorEvent.HANDSHAKE_SUCCEEDED | MonitorEvent.HANDSHAKE_FAILED_AUTH
            | MonitorEvent.HANDSHAKE_FAILED_PROTOCOL | MonitorEvent.HANDSHAKE_FAILED_NO_DETAIL;

    @Test
    void tlsRequestReplyNamesTheServer() {
        try (Context ctx = new Context(); Socket rep = ctx.socket(SocketType.REP); Socket req = ctx.socket(SocketType.REQ);
             Frame f = new Frame()) {
            TestCertificates.serve(rep);
            String ep = rep.bind("tls://127.0.0.1:*");
            assertTrue(ep.startsWith("tls://127.0.0.1:") && !ep.endsWith(":*"), ep);
            req.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            req.set(SocketOption.LINGER, 0);
            req.set(SocketOption.RCVTIMEO, DEADLINE_MS);
            rep.set(SocketOption.RCVTIMEO, DEADLINE_MS);
            req.connect(ep);
            for (int i = 0; i < 3; i++) {
                req.send("q" + i, 0);
                assertTrue(rep.recv(f, 0));
                assertEquals("q" + i, f.toStringUtf8());
                assertNull(f.property("TLS-Peer-Subject"), "no client certificate, no subject");
                assertEquals("REQ", f.property("Socket-Type"));
                rep.send("a" + i, 0);
                assertTrue(req.recv(f, 0));
                assertEquals("a" + i, f.toStringUtf8());
                assertEquals(TestCertificates.SERVER_SUBJECT, f.property("TLS-Peer-Subject"), "server's subject at the client");
            }
            byte[] big = new byte[1 << 20];
            for (int i = 0; i < big.length; i++) big[i] = (byte) (i * 7);
            req.send(big);
            assertArrayEquals(big, rep.recv(), "1 MiB over tls");
        }
    }

    @Test
    void hostNameFromTheOption() {
        // The server's certificate names DNS:localhost; a client connecting by address and
        // told to expect "localhost" accepts it.
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Socket push = ctx.socket(SocketType.PUSH)) {
            TestCertificates.serve(pull);
            String ep = pull.bind("tls://127.0.0.1:*");
            push.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            push.set(SocketOption.WSS_HOSTNAME, "localhost");
            push.set(SocketOption.LINGER, 0);
            push.connect(ep);
            push.send("by name", 0);
            assertTrue(readable(pull, DEADLINE_MS), "message within the deadline");
            assertEquals("by name", pull.recvStr(0));
        }
    }

    @Test
    void mutualTlsNamesTheClient() {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Monitor m = Monitor.of(pull, OUTCOMES); Frame f = new Frame()) {
            String ep = mutualTlsServer(pull, null);
            // Without a certificate: refused by the server, nothing arrives.
            try (Socket anon = ctx.socket(SocketType.PUSH)) {
                anon.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
                assertRefused(anon, ep, m, pull);
            }
            try (Socket push = certifiedClient(ctx)) {
                deliver(push, ep, pull, f, "hello");
                assertEquals(TestCertificates.CLIENT_SUBJECT, f.property("TLS-Peer-Subject"), "client's subject at the server");
                assertNull(f.property("No-Such-Property"));
            }
        }
    }

    @Test
    void zapAllowsByCertificateSubject() {
        try (Context ctx = new Context();
             ZapAuthenticator zap = ZapAuthenticator.start(ctx, ZapAuthenticator.subjects(java.util.Set.of(TestCertificates.CLIENT_SUBJECT)));
             Socket pull = ctx.socket(SocketType.PULL); Monitor m = Monitor.of(pull, OUTCOMES); Frame f = new Frame()) {
            String ep = mutualTlsServer(pull, "tls");
            try (Socket push = certifiedClient(ctx)) {
                deliver(push, ep, pull, f, "known");
                assertEquals(TestCertificates.CLIENT_SUBJECT, f.property("User-Id"), "the subject is the User-Id");
            }
        }
        // The same client against a handler that knows another subject: refused by ZAP.
        try (Context ctx = new Context();
             ZapAuthenticator zap = ZapAuthenticator.start(ctx, ZapAuthenticator.subjects(java.util.Set.of("CN=someone else")));
             Socket pull = ctx.socket(SocketType.PULL); Monitor m = Monitor.of(pull, OUTCOMES)) {
            String ep = mutualTlsServer(pull, "tls");
            try (Socket push = certifiedClient(ctx)) {
                assertRefused(push, ep, m, pull);
            }
        }
    }

    /** A client that refuses the server's certificate: AUTH 400 at its monitor, nothing arrives. */
    private static void refused(java.util.function.Consumer<Socket> configure) {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Socket push = ctx.socket(SocketType.PUSH);
             Monitor m = Monitor.of(push, OUTCOMES)) {
            TestCertificates.serve(pull);
            String ep = pull.bind("tls://127.0.0.1:*");
            configure.accept(push);
            assertRefused(push, ep, m, pull);
        }
    }

    @Test
    void aClientTrustingAnotherCaIsRefused() {
        refused(s -> s.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("other-ca.pem")));
    }

    @Test
    void theWrongHostNameIsRefused() {
        refused(s -> {
            s.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            s.set(SocketOption.WSS_HOSTNAME, "other.example");
        });
    }

    @Test
    void aClientTrustingOnlyTheSystemIsRefused() {
        // WSS_TRUST_SYSTEM alone is a client's trust (no EINVAL at connect); the system's store
        // does not hold the test CA, so its server is refused.
        refused(s -> s.set(SocketOption.WSS_TRUST_SYSTEM, true));
    }

    @Test
    void badOptionsAreRefusedWhereTheyAreGiven() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PUSH); Socket c = ctx.socket(SocketType.PUSH)) {
            ZmqException e = assertThrows(ZmqException.class, () -> s.set(SocketOption.WSS_TRUST_PEM, "not a certificate"));
            assertEquals(ZmqException.EINVAL, e.errno());
            assertThrows(ZmqException.class, () -> s.set(SocketOption.WSS_KEY_PEM, "not a key"));
            assertThrows(IllegalArgumentException.class, () -> s.get(SocketOption.WSS_KEY_PEM), "write-only");
            // A key PEM block whose content is no key passes the PEM check and is refused where
            // the key is used: at bind.
            s.set(SocketOption.WSS_CERT_PEM, TestCertificates.get("server.pem"));
            s.set(SocketOption.WSS_KEY_PEM, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n");
            e = assertThrows(ZmqException.class, () -> s.bind("tls://127.0.0.1:*"));
            assertEquals(ZmqException.EINVAL, e.errno());
            // A client that trusts nothing cannot connect.
            e = assertThrows(ZmqException.class, () -> c.connect("tls://127.0.0.1:5555"));
            assertEquals(ZmqException.EINVAL, e.errno());
        }
    }

    @Test
    void wssRequestReplyWithMutualTls() {
        try (Context ctx = new Context(); Socket rep = ctx.socket(SocketType.REP); Socket req = ctx.socket(SocketType.REQ);
             Frame f = new Frame()) {
            TestCertificates.serve(rep);
            rep.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            String ep = rep.bind("wss://127.0.0.1:*/x");
            assertTrue(ep.startsWith("wss://127.0.0.1:") && ep.endsWith("/x") && !ep.contains("*"), ep);
            req.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            TestCertificates.present(req);
            req.set(SocketOption.LINGER, 0);
            req.set(SocketOption.RCVTIMEO, DEADLINE_MS);
            rep.set(SocketOption.RCVTIMEO, DEADLINE_MS);
            req.connect(ep.replace("127.0.0.1", "localhost"));
            req.send("over wss", 0);
            assertTrue(rep.recv(f, 0));
            assertEquals("over wss", f.toStringUtf8());
            assertEquals(TestCertificates.CLIENT_SUBJECT, f.property("TLS-Peer-Subject"), "client's subject at the server");
            rep.send("back", 0);
            assertTrue(req.recv(f, 0));
            assertEquals("back", f.toStringUtf8());
            assertEquals(TestCertificates.SERVER_SUBJECT, f.property("TLS-Peer-Subject"), "server's subject at the client");
        }
    }

    @Test
    void aLongPropertyValueIsReadWhole() {
        // Frame.property reads a value of any length: here a peer's own 6000-byte metadata
        // (ZMQ_METADATA), carried over tls beside the certificate's subject.
        String value = "v".repeat(6000);
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Socket push = ctx.socket(SocketType.PUSH);
             Frame f = new Frame()) {
            TestCertificates.serve(pull);
            pull.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            String ep = pull.bind("tls://127.0.0.1:*");
            push.set(SocketOption.WSS_TRUST_PEM, TestCertificates.get("ca.pem"));
            TestCertificates.present(push);
            push.set(SocketOption.METADATA, "X-Long:" + value);
            push.set(SocketOption.LINGER, 0);
            push.connect(ep);
            push.send("m", 0);
            pull.set(SocketOption.RCVTIMEO, DEADLINE_MS);
            assertTrue(pull.recv(f, 0));
            assertEquals(value, f.property("X-Long"));
            assertEquals(TestCertificates.CLIENT_SUBJECT, f.property("TLS-Peer-Subject"));
        }
    }
}
