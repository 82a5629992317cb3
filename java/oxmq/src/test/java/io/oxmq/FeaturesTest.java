package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** Poller, proxy, monitor, CURVE keys, PLAIN and CURVE with the Java ZAP authenticator. */
@Timeout(60)
class FeaturesTest {
    /** A front end binding more functions of the loaded library reaches the same library and
     *  the same context: zmq_ctx_set through Zmq.symbols() is seen by Context.get. */
    @Test
    void symbolsAndNativeAddressReachTheLoadedLibrary() throws Throwable {
        var linker = java.lang.foreign.Linker.nativeLinker();
        var ctxSet = linker.downcallHandle(Zmq.symbols().find("zmq_ctx_set").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_LONG, java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT));
        try (Context ctx = new Context()) {
            assertEquals(0, (int) ctxSet.invokeExact(ctx.nativeAddress(), Context.MAX_SOCKETS, 77));
            assertEquals(77, ctx.get(Context.MAX_SOCKETS));
        }
        assertTrue(Zmq.symbols().find("zmq_no_such_function").isEmpty());
    }

    @Test
    void pollerReportsReadySockets() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PULL); Socket b = ctx.socket(SocketType.PULL);
             Socket pa = ctx.socket(SocketType.PUSH); Poller p = new Poller(1)) {
            pa.connect(a.bind("tcp://127.0.0.1:*"));
            b.bind("inproc://quiet");
            int ia = p.register(a, Zmq.POLLIN), ib = p.register(b, Zmq.POLLIN);
            assertEquals(0, p.poll(0));
            pa.send("ping", 0);
            assertEquals(1, p.poll(5000));
            assertTrue(p.isReadable(ia));
            assertFalse(p.isReadable(ib));
            assertEquals("ping", a.recvStr(0));
            p.unregister(b);
            assertEquals(1, p.size());
            long t0 = System.nanoTime();
            assertEquals(0, p.poll(50));
            assertTrue(System.nanoTime() - t0 >= 45_000_000L);
        }
    }

    @Test
    void steerableProxyForwardsAndTerminates() throws Exception {
        try (Context ctx = new Context(); Socket front = ctx.socket(SocketType.PULL); Socket back = ctx.socket(SocketType.PUSH);
             Socket ctlServer = ctx.socket(SocketType.PAIR); Socket ctlClient = ctx.socket(SocketType.PAIR);
             Socket in = ctx.socket(SocketType.PUSH); Socket out = ctx.socket(SocketType.PULL)) {
            in.connect(front.bind("tcp://127.0.0.1:*"));
            back.bind("inproc://proxy-back");
            out.connect("inproc://proxy-back");
            ctlServer.bind("inproc://proxy-ctl");
            ctlClient.connect("inproc://proxy-ctl");
            CompletableFuture<Void> run = CompletableFuture.runAsync(() -> Proxy.runSteerable(front, back, null, ctlServer));
            in.send("through the proxy", 0);
            assertEquals("through the proxy", out.recvStr(0));
            ctlClient.send("TERMINATE", 0);
            run.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void monitorSeesListeningAcceptedAndHandshake() {
        try (Context ctx = new Context(); Socket server = ctx.socket(SocketType.REP); Socket client = ctx.socket(SocketType.REQ)) {
            try (Monitor m = Monitor.of(server, MonitorEvent.ALL)) {
                String ep = server.bind("tcp://127.0.0.1:*");
                MonitorEvent e = m.next(5000);
                assertEquals(MonitorEvent.LISTENING, e.event(), e.name());
                assertEquals(ep, e.endpoint());
                client.connect(ep);
                MonitorEvent acc = m.next(5000);
                assertEquals(MonitorEvent.ACCEPTED, acc.event(), acc.name());
                MonitorEvent hs = m.next(5000);
                assertEquals(MonitorEvent.HANDSHAKE_SUCCEEDED, hs.event(), hs.name());
                assertNull(m.next(20));
            }
        }
    }

    @Test
    void curveKeysAndZ85() {
        Curve.KeyPair kp = Curve.keyPair();
        assertEquals(40, kp.publicKey().length());
        assertEquals(kp.publicKey(), Curve.publicKey(kp.secretKey()));
        assertFalse(kp.toString().contains(kp.secretKey()));
        byte[] raw = Curve.z85Decode(kp.publicKey());
        assertEquals(32, raw.length);
        assertEquals(kp.publicKey(), Curve.z85Encode(raw));
        // the Z85 test vector of RFC 32
        assertEquals("HelloWorld", Curve.z85Encode(new byte[] {(byte) 0x86, 0x4F, (byte) 0xD2, 0x6F, (byte) 0xB5, 0x59, (byte) 0xF7, 0x5B}));
    }

    private static boolean exchange(Socket server, Socket client) {
        server.set(SocketOption.RCVTIMEO, 2000);
        // The client's pipe exists from connect() on, so the message queues at once; but a
        // refused handshake ends a connecting session for good (as in libzmq), pipe and all,
        // so a client refused before this line could never send: that is a refusal too.
        if (!client.send("hello", Zmq.DONTWAIT)) return false;
        try {
            return "hello".equals(server.recvStr(0));
        } catch (AgainException e) {
            return false;
        }
    }

    @Test
    void plainWithZapAllowsTheRightPasswordOnly() {
        try (Context ctx = new Context();
             ZapAuthenticator auth = ZapAuthenticator.start(ctx, ZapAuthenticator.plain(Map.of("admin", "secret")))) {
            for (String password : new String[] {"secret", "wrong"}) {
                try (Socket server = ctx.socket(SocketType.PULL); Socket client = ctx.socket(SocketType.PUSH)) {
                    server.set(SocketOption.PLAIN_SERVER, true);
                    String ep = server.bind("tcp://127.0.0.1:*");
                    client.set(SocketOption.PLAIN_USERNAME, "admin");
                    client.set(SocketOption.PLAIN_PASSWORD, password);
                    client.set(SocketOption.LINGER, 0);
                    client.connect(ep);
                    boolean got = exchange(server, client);
                    assertEquals(password.equals("secret"), got, "password " + password);
                    if (got) {
                        try (Frame f = new Frame()) {
                            client.send("who", 0);
                            server.recv(f, 0);
                            assertEquals("admin", f.property("User-Id"));
                        }
                    }
                }
            }
            assertNull(auth.failure());
        }
    }

    @Test
    void curveWithZapAllowsKnownClientKeysOnly() {
        Curve.KeyPair serverKeys = Curve.keyPair(), good = Curve.keyPair(), bad = Curve.keyPair();
        try (Context ctx = new Context();
             ZapAuthenticator auth = ZapAuthenticator.start(ctx, ZapAuthenticator.curve(Set.of(good.publicKey())))) {
            for (Curve.KeyPair clientKeys : new Curve.KeyPair[] {good, bad}) {
                try (Socket server = ctx.socket(SocketType.PULL); Socket client = ctx.socket(SocketType.PUSH);
                     Monitor m = Monitor.of(server, MonitorEvent.HANDSHAKE_SUCCEEDED | MonitorEvent.HANDSHAKE_FAILED_AUTH)) {
                    server.set(SocketOption.CURVE_SERVER, true);
                    server.set(SocketOption.CURVE_SECRETKEY, serverKeys.secretKey());
                    String ep = server.bind("tcp://127.0.0.1:*");
                    client.set(SocketOption.CURVE_SERVERKEY, serverKeys.publicKey());
                    client.set(SocketOption.CURVE_PUBLICKEY, clientKeys.publicKey());
                    client.set(SocketOption.CURVE_SECRETKEY, clientKeys.secretKey());
                    client.set(SocketOption.LINGER, 0);
                    client.connect(ep);
                    MonitorEvent e = m.next(5000);
                    assertNotNull(e);
                    if (clientKeys == good) {
                        assertEquals(MonitorEvent.HANDSHAKE_SUCCEEDED, e.event(), e.name());
                        assertTrue(exchange(server, client));
                    } else {
                        assertEquals(MonitorEvent.HANDSHAKE_FAILED_AUTH, e.event(), e.name());
                    }
                }
            }
            assertNull(auth.failure());
        }
    }
}
