package io.oxmq.wiring;

import io.oxmq.ZmqException;
import io.oxmq.ZmqInterruptedException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java front end end to end: a name server process (crates/oxmq-wiring's
 * oxmq-name-server), wiring peers in other processes (oxmq-wiring-peer, the Rust API), and
 * Jzmq handles in this JVM, all over tcp loopback.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JzmqTest {
    private static final Path BIN = Path.of(System.getProperty("oxmq.bin", "../../target/release"));
    private static Process server;
    private static String host;

    @BeforeAll
    static void startNameServer() throws IOException {
        Path exe = BIN.resolve("oxmq-name-server");
        assertTrue(Files.isExecutable(exe), exe + " is missing: cargo build --release -p oxmq-wiring --bins");
        server = new ProcessBuilder(exe.toString(), "--bind", "tcp://127.0.0.1:*", "--print-endpoint")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertTrue(line != null && line.startsWith("tcp://"), "name server said " + line);
        host = line.substring("tcp://".length());
    }

    @AfterAll
    static void stopNameServer() throws InterruptedException {
        if (server != null) {
            server.destroy();
            server.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String unique(String base) {
        return base + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A wiring peer process; its stdout lines are read on demand. */
    private static final class Peer implements AutoCloseable {
        final Process p;
        final BufferedReader out;

        Peer(String... args) throws IOException {
            List<String> cmd = new ArrayList<>(List.of(BIN.resolve("oxmq-wiring-peer").toString(), host));
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("OXMQ_WIRING_PEER_TIMEOUT_MS", "20000");
            p = pb.start();
            out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        }

        String line() throws IOException {
            String l = out.readLine();
            if (l == null) {
                throw new IOException("the peer ended early");
            }
            return l;
        }

        int exit() throws InterruptedException {
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "peer did not finish");
            return p.exitValue();
        }

        @Override
        public void close() {
            p.destroyForcibly();
        }
    }

    @Test
    void theSeedsSnippetRunsAgainstANameServer() {
        String e = unique("E"), q = unique("Q");
        try (Jzmq obj = new Jzmq(host)) {
            int eid = obj.createExchange(e, Jzmq.SCOPE_GLOBAL, "");
            obj.createQueue(q, Jzmq.SCOPE_GLOBAL, "");
            obj.bind(e, q);
            obj.send(eid, new byte[] {1, 2, 3});
            byte[] msg = obj.receive();
            assertArrayEquals(new byte[] {1, 2, 3}, msg);
            // Into the caller's buffer: the full length comes back, the rest is cut (zmq_recv).
            obj.send(eid, new byte[] {4, 5, 6}, 0, 3);
            byte[] small = new byte[2];
            assertEquals(3, obj.receive(small));
            assertArrayEquals(new byte[] {4, 5}, small);
        }
    }

    /** The seed's form: "" runs the embedded name service (on OXMQ_WIRING_PORT, set by the build). */
    @Test
    void anEmptyHostRunsTheEmbeddedNameService() {
        String e = unique("E"), q = unique("Q");
        try (Jzmq a = new Jzmq(""); Jzmq b = new Jzmq("")) {
            int eid = a.createExchange(e, Jzmq.SCOPE_GLOBAL, "");
            b.createQueue(q, Jzmq.SCOPE_GLOBAL, "");
            a.bind(e, q);
            a.send(eid, "through the embedded service".getBytes(StandardCharsets.UTF_8));
            assertEquals("through the embedded service", new String(b.receive(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void aJavaExchangeFeedsAQueueInAnotherProcess() throws Exception {
        String e = unique("E"), q = unique("Q");
        try (Peer peer = new Peer("queue", q, "3"); Jzmq obj = new Jzmq(host)) {
            assertTrue(peer.line().startsWith("READY"));
            int eid = obj.createExchange(e, Jzmq.SCOPE_GLOBAL, "");
            obj.bind(e, q);
            for (int i = 0; i < 3; i++) {
                obj.send(eid, ("java-" + i).getBytes(StandardCharsets.UTF_8));
            }
            for (int i = 0; i < 3; i++) {
                assertEquals("GOT java-" + i, peer.line());
            }
            assertEquals(0, peer.exit());
        }
    }

    @Test
    void anExchangeInAnotherProcessFeedsAJavaQueue() throws Exception {
        String e = unique("E"), q = unique("Q");
        try (Jzmq obj = new Jzmq(host)) {
            obj.createQueue(q, Jzmq.SCOPE_GLOBAL, "");
            try (Peer peer = new Peer("source", e, q, "5")) {
                for (int i = 0; i < 5; i++) {
                    assertEquals("msg-" + i, new String(obj.receive(), StandardCharsets.UTF_8));
                }
                assertEquals("READY", peer.line());
                assertEquals("SENT", peer.line());
                assertEquals(0, peer.exit());
            }
            assertTrue(obj.lookup(q).startsWith("tcp://"), "a global queue is a plain ZMTP endpoint");
        }
    }

    /** Creates the process-scope queue {@code queue} on {@code a} and a local exchange on
     *  {@code b} bound to it; returns the exchange's id. */
    private static int wireProcessQueue(Jzmq a, String queue, Jzmq b) {
        a.createQueue(queue, Jzmq.SCOPE_PROCESS, "");
        String le = unique("LE");
        int eid = b.createExchange(le, Jzmq.SCOPE_LOCAL, "");
        b.bind(le, queue);
        return eid;
    }

    @Test
    void localAndProcessScopesNeedNoNameServiceRoundTrip() {
        try (Jzmq a = new Jzmq(host); Jzmq b = new Jzmq(host)) {
            String pq = unique("PQ");
            int eid = wireProcessQueue(a, pq, b);
            byte[] big = new byte[100_000];
            big[99_999] = 7;
            b.send(eid, big);
            assertArrayEquals(big, a.receive());
            // Longer than the receive buffer has grown to: the buffer grows again, nothing is
            // lost, and a caller's smaller array gets the head and the full length.
            byte[] bigger = new byte[300_000];
            bigger[0] = 1;
            bigger[299_999] = 9;
            b.send(eid, bigger);
            b.send(eid, new byte[] {5});
            byte[] head = new byte[4];
            assertEquals(300_000, a.receive(head));
            assertArrayEquals(new byte[] {1, 0, 0, 0}, head);
            assertArrayEquals(new byte[] {5}, a.receive());
            assertThrows(ZmqException.class, () -> a.lookup(pq), "a process-scope name is not global");
        }
    }

    @Test
    void aSenderAheadOfItsReceiverWaitsAndLosesNothing() throws Exception {
        // More than the queue and the kernel's socket buffers hold (about 20 MB on the wire):
        // the sender's quick (non-blocking) send is refused once they are full, and the
        // blocking send takes over; every message arrives, in order.
        int n = 2_000_000;
        try (Jzmq a = new Jzmq(host); Jzmq b = new Jzmq(host)) {
            int eid = wireProcessQueue(a, unique("PQ"), b);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread sender = new Thread(() -> {
                try {
                    byte[] m = new byte[4];
                    for (int i = 0; i < n; i++) {
                        java.nio.ByteBuffer.wrap(m).putInt(i);
                        b.send(eid, m);
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            sender.start();
            sender.join(1_000); // a bounded queue holds it back for good; an unbounded one would not
            assertNull(failed.get());
            assertTrue(sender.isAlive(), "the sender finished before anything was received: no queue limit reached");
            byte[] buf = new byte[8];
            for (int i = 0; i < n; i++) {
                assertEquals(4, a.receive(buf));
                assertEquals(i, java.nio.ByteBuffer.wrap(buf).getInt());
            }
            sender.join(30_000);
            assertTrue(!sender.isAlive(), "the sender is still blocked after its last message was received");
            assertNull(failed.get());
            assertNull(a.receive(50), "nothing beyond what was sent");
        }
    }

    @Test
    void aReceiveIntoAnArrayThatWaitsGetsEachMessageWhole() throws Exception {
        // The receiver asks for each message before it is sent, so most receives wait for it
        // (and then copy it into the array from the queue); an empty message, one of 64 KiB and
        // one longer than the array (its head and full length), in turn.
        int rounds = 200;
        try (Jzmq a = new Jzmq(host); Jzmq b = new Jzmq(host)) {
            int eid = wireProcessQueue(a, unique("PQ"), b);
            java.util.concurrent.SynchronousQueue<Integer> asked = new java.util.concurrent.SynchronousQueue<>();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            byte[] buf = new byte[65_536];
            Thread receiver = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        asked.put(0);
                        assertEquals(0, a.receive(buf));
                        asked.put(1);
                        assertEquals(65_536, a.receive(buf));
                        assertEquals((byte) r, buf[0]);
                        assertEquals((byte) (r + 1), buf[65_535]);
                        asked.put(2);
                        assertEquals(70_000, a.receive(buf));
                        assertEquals((byte) (r + 2), buf[0]);
                        assertEquals((byte) (r + 3), buf[65_535]);
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            receiver.start();
            for (int r = 0; r < rounds && failed.get() == null; r++) {
                byte[] m = new byte[65_536];
                m[0] = (byte) r;
                m[65_535] = (byte) (r + 1);
                byte[] longer = new byte[70_000];
                longer[0] = (byte) (r + 2);
                longer[65_535] = (byte) (r + 3);
                assertEquals(0, asked.poll(10, TimeUnit.SECONDS));
                b.send(eid, new byte[0]);
                assertEquals(1, asked.poll(10, TimeUnit.SECONDS));
                b.send(eid, m);
                assertEquals(2, asked.poll(10, TimeUnit.SECONDS));
                b.send(eid, longer);
            }
            receiver.join(30_000);
            assertNull(failed.get());
            assertTrue(!receiver.isAlive(), "the receiver is still waiting");
            assertNull(a.receive(50), "nothing beyond what was sent");
        }
    }

    @Test
    void framesGoAndComeWithoutACopy() throws Exception {
        try (Jzmq a = new Jzmq(host); Jzmq b = new Jzmq(host); io.oxmq.Frame f = new io.oxmq.Frame();
             io.oxmq.Frame r = new io.oxmq.Frame()) {
            // Within one handle: the receiver gets the very buffer the sender filled.
            String lq = unique("LQ"), le = unique("LE");
            a.createQueue(lq, Jzmq.SCOPE_LOCAL, "");
            int leid = a.createExchange(le, Jzmq.SCOPE_LOCAL, "");
            a.bind(le, lq);
            java.lang.foreign.MemorySegment body = f.allocate(70_000).buffer();
            body.fill((byte) 'f');
            body.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 69_999, (byte) 'F');
            long address = body.address();
            a.send(leid, f);
            assertEquals(0, f.size(), "a sent frame is empty");
            assertEquals(70_000, a.receive(r));
            assertEquals(address, r.data().address());
            assertEquals('F', r.byteAt(69_999));
            // Between handles of the process; an empty frame; an array's message into a frame.
            int eid = wireProcessQueue(a, unique("PQ"), b);
            b.send(eid, f);
            assertEquals(0, a.receive(r));
            b.send(eid, new byte[] {1, 2, 3});
            assertEquals(3, a.receive(r));
            assertArrayEquals(new byte[] {1, 2, 3}, r.toByteArray());
            // Over tcp, and a receive that waits for its message.
            String gq = unique("GQ"), ge = unique("GE");
            a.createQueue(gq, Jzmq.SCOPE_GLOBAL, "");
            int geid = b.createExchange(ge, Jzmq.SCOPE_LOCAL, "");
            b.bind(ge, gq);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread sender = new Thread(() -> {
                try (io.oxmq.Frame g = new io.oxmq.Frame()) {
                    for (int i = 0; i < 100; i++) {
                        g.allocate(1000).buffer().fill((byte) i);
                        b.send(geid, g);
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            sender.start();
            for (int i = 0; i < 100; i++) {
                assertEquals(1000, a.receive(r));
                assertEquals((byte) i, r.byteAt(0));
                assertEquals((byte) i, r.byteAt(999));
            }
            sender.join(30_000);
            assertNull(failed.get());
            assertNull(a.receive(50), "nothing beyond what was sent");
        }
    }

    @Test
    void errorsComeBackAsExceptionsWithErrno() throws IOException {
        try (Jzmq obj = new Jzmq(host)) {
            ZmqException unknown = assertThrows(ZmqException.class, () -> obj.bind(unique("nope"), unique("nada")));
            assertEquals(2 /* ENOENT */, unknown.errno());
            String name = unique("taken");
            obj.createQueue(name, Jzmq.SCOPE_GLOBAL, "");
            try (Jzmq other = new Jzmq(host)) {
                ZmqException taken = assertThrows(ZmqException.class, () -> other.createQueue(name, Jzmq.SCOPE_GLOBAL, ""));
                assertEquals(ZmqException.EADDRINUSE, taken.errno());
            }
            ZmqException badLocation = assertThrows(ZmqException.class,
                    () -> obj.createExchange(unique("E"), Jzmq.SCOPE_GLOBAL, "no-such-interface-or-port"));
            assertEquals(ZmqException.EINVAL, badLocation.errno());
            ZmqException badScope = assertThrows(ZmqException.class, () -> obj.createQueue(unique("Q"), 42, ""));
            assertEquals(ZmqException.EINVAL, badScope.errno());
            assertThrows(ZmqException.class, () -> obj.send(12345, new byte[1]));
            assertNull(obj.receive(50), "nothing queued: a timed receive returns null");
        }
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        ZmqException unreachable = assertThrows(ZmqException.class, () -> new Jzmq("127.0.0.1:" + dead).close());
        assertEquals(ZmqException.EHOSTUNREACH, unreachable.errno());
        Jzmq closed = new Jzmq(host);
        closed.close();
        closed.close();
        assertThrows(IllegalStateException.class, () -> closed.send(0, new byte[1]));
    }

    @Test
    void aBlockedReceiveEndsOnInterrupt() throws Exception {
        try (Jzmq obj = new Jzmq(host)) {
            obj.createQueue(unique("Q"), Jzmq.SCOPE_LOCAL, "");
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = startReceiver(obj, thrown);
            t.interrupt();
            t.join(10_000);
            assertTrue(!t.isAlive(), "receive still blocked after interrupt");
            assertTrue(thrown.get() instanceof ZmqInterruptedException, "got " + thrown.get());
        }
    }

    /** A thread named "receiver" waiting in {@code obj.receive()}; what it throws goes to {@code thrown}. */
    private static Thread startReceiver(Jzmq obj, AtomicReference<Throwable> thrown) {
        Thread t = new Thread(() -> {
            try {
                obj.receive();
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, "receiver");
        t.start();
        return t;
    }

    /** Whether {@code t} is inside a handle's receive, waiting in the native call. */
    private static boolean waitingInReceive(Thread t) {
        for (StackTraceElement f : t.getStackTrace()) {
            if (f.getClassName().equals(Jzmq.class.getName()) && f.getMethodName().equals("nextInto")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void aHandleInUseByAnotherThreadRefusesCallsAndCloseUntilItIsLeft() throws Exception {
        Jzmq obj = new Jzmq(host);
        String queue = unique("Q");
        String exchange = unique("E");
        obj.createQueue(queue, Jzmq.SCOPE_LOCAL, "");
        int eid = obj.createExchange(exchange, Jzmq.SCOPE_LOCAL, "");
        obj.bind(exchange, queue);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = startReceiver(obj, thrown);
        while (!waitingInReceive(t)) {
            assertTrue(t.isAlive(), "the receiver ended early: " + thrown.get());
            Thread.onSpinWait();
        }
        // Neither a call nor close reaches the native handle the receiver is using.
        IllegalStateException busy = assertThrows(IllegalStateException.class, () -> obj.send(eid, new byte[] {1}));
        assertTrue(busy.getMessage().contains("in use by thread receiver"), busy.getMessage());
        assertThrows(IllegalStateException.class, obj::close);
        t.interrupt();
        t.join(10_000);
        assertTrue(thrown.get() instanceof ZmqInterruptedException, "got " + thrown.get());
        // Left: this thread may use and close it.
        obj.send(eid, new byte[] {2});
        assertArrayEquals(new byte[] {2}, obj.receive());
        obj.close();
        assertThrows(IllegalStateException.class, () -> obj.receive(0));
    }
}
