package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.*;

@Timeout(30)
class SocketTest {
    @Test
    void reqRepOverTcpWithEphemeralPort() {
        try (Context ctx = new Context(); Socket rep = ctx.socket(SocketType.REP); Socket req = ctx.socket(SocketType.REQ)) {
            String ep = rep.bind("tcp://127.0.0.1:*");
            assertTrue(ep.matches("tcp://127\\.0\\.0\\.1:\\d+"), ep);
            assertNotEquals("tcp://127.0.0.1:0", ep);
            req.connect(ep);
            req.send("hello", 0);
            assertEquals("hello", rep.recvStr(0));
            rep.send("world", 0);
            assertEquals("world", req.recvStr(0));
        }
    }

    @Test
    void multipartOverIpcInAFreshDirectory() throws Exception {
        Path dir = Files.createTempDirectory("oxmq-ipc");
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.DEALER); Socket b = ctx.socket(SocketType.ROUTER)) {
            b.bind("ipc://" + dir.resolve("s"));
            a.set(SocketOption.ROUTING_ID, "client-1".getBytes(StandardCharsets.UTF_8));
            a.connect("ipc://" + dir.resolve("s"));
            a.send("x", Zmq.SNDMORE);
            a.send("y", 0);
            assertEquals("client-1", b.recvStr(0));
            assertTrue(b.hasReceiveMore());
            assertEquals("x", b.recvStr(0));
            assertTrue(b.hasReceiveMore());
            assertEquals("y", b.recvStr(0));
            assertFalse(b.hasReceiveMore());
        } finally {
            try (var s = Files.list(dir)) { s.forEach(p -> p.toFile().delete()); }
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void typedOptionsRoundTrip() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.DEALER)) {
            s.set(SocketOption.LINGER, 123);
            assertEquals(123, s.get(SocketOption.LINGER));
            s.set(SocketOption.SNDHWM, 77);
            assertEquals(77, s.get(SocketOption.SNDHWM));
            s.set(SocketOption.MAXMSGSIZE, 1L << 20);
            assertEquals(1L << 20, s.get(SocketOption.MAXMSGSIZE));
            s.set(SocketOption.IMMEDIATE, true);
            assertTrue(s.get(SocketOption.IMMEDIATE));
            s.set(SocketOption.ROUTING_ID, new byte[] {1, 2, 3});
            assertArrayEquals(new byte[] {1, 2, 3}, s.get(SocketOption.ROUTING_ID));
            assertEquals(SocketType.DEALER.value, s.get(SocketOption.TYPE));
            s.set(SocketOption.RCVTIMEO, 5000);
            assertEquals(5000, s.get(SocketOption.RCVTIMEO));
            assertThrows(IllegalArgumentException.class, () -> s.set(SocketOption.LAST_ENDPOINT, "x"));
        }
    }

    @Test
    void errorsCarryErrno() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PULL)) {
            ZmqException e = assertThrows(ZmqException.class, () -> s.connect("bogus://nowhere"));
            assertEquals(ZmqException.EPROTONOSUPPORT, e.errno(), e.getMessage());
            ZmqException e2 = assertThrows(ZmqException.class, () -> s.bind("tcp://127.0.0.1:notaport"));
            assertEquals(ZmqException.EINVAL, e2.errno(), e2.getMessage());
            String ep = s.bind("tcp://127.0.0.1:*");
            try (Socket t = ctx.socket(SocketType.PULL)) {
                ZmqException e3 = assertThrows(ZmqException.class, () -> t.bind(ep));
                assertEquals(ZmqException.EADDRINUSE, e3.errno());
            }
            try (Socket rep = ctx.socket(SocketType.REP)) {
                ZmqException fsm = assertThrows(ZmqException.class, () -> rep.send("no request yet", 0));
                assertEquals(ZmqException.EFSM, fsm.errno());
            }
        }
    }

    @Test
    void dontwaitAndTimeoutAreDistinct() {
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PULL)) {
            s.bind("inproc://nothing");
            assertEquals(-1, s.recv(new byte[8], Zmq.DONTWAIT));
            assertNull(s.recv(Zmq.DONTWAIT));
            try (Frame f = new Frame()) {
                assertFalse(s.recv(f, Zmq.DONTWAIT));
            }
            s.set(SocketOption.RCVTIMEO, 30);
            long t0 = System.nanoTime();
            AgainException e = assertThrows(AgainException.class, () -> s.recv(new byte[8], 0));
            assertEquals(ZmqException.EAGAIN, e.errno());
            assertTrue(System.nanoTime() - t0 >= 25_000_000L);
        }
        try (Context ctx = new Context(); Socket push = ctx.socket(SocketType.PUSH)) {
            push.set(SocketOption.SNDHWM, 1);
            // no peer: a PUSH cannot queue
            assertFalse(push.send(new byte[1], Zmq.DONTWAIT));
            push.set(SocketOption.SNDTIMEO, 20);
            assertThrows(AgainException.class, () -> push.send(new byte[1], 0));
        }
    }

    @Test
    void everyBufferKindRoundTrips() {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR); Socket b = ctx.socket(SocketType.PAIR);
             Arena arena = Arena.ofConfined()) {
            String ep = b.bind("tcp://127.0.0.1:*");
            a.connect(ep);
            byte[] payload = new byte[1000];
            for (int i = 0; i < payload.length; i++) payload[i] = (byte) (i * 7);

            // byte[] with offset -> direct ByteBuffer
            assertTrue(a.send(payload, 10, 500, 0));
            ByteBuffer direct = ByteBuffer.allocateDirect(600);
            assertEquals(500, b.recv(direct, 0));
            assertEquals(500, direct.position());
            for (int i = 0; i < 500; i++) assertEquals(payload[10 + i], direct.get(i));

            // native segment -> heap ByteBuffer
            MemorySegment seg = arena.allocate(1000);
            MemorySegment.copy(payload, 0, seg, JAVA_BYTE, 0, 1000);
            assertTrue(a.send(seg, 0));
            ByteBuffer heap = ByteBuffer.allocate(1000);
            assertEquals(1000, b.recv(heap, 0));
            assertArrayEquals(payload, heap.array());

            // direct ByteBuffer -> native segment
            direct.flip();
            assertTrue(a.send(direct, 0));
            assertEquals(0, direct.remaining());
            MemorySegment dst = arena.allocate(2000);
            assertEquals(500, b.recv(dst, 0));
            for (int i = 0; i < 500; i++) assertEquals(payload[10 + i], dst.get(JAVA_BYTE, i));

            // truncation reports the full size
            assertTrue(a.send(payload, 0));
            byte[] small = new byte[10];
            assertEquals(1000, b.recv(small, 0));
            for (int i = 0; i < 10; i++) assertEquals(payload[i], small[i]);

            // heap segment -> Frame view
            assertTrue(a.send(MemorySegment.ofArray(payload), 0));
            try (Frame f = new Frame()) {
                assertTrue(b.recv(f, 0));
                assertEquals(1000, f.size());
                MemorySegment view = f.data();
                assertTrue(view.isReadOnly());
                for (int i = 0; i < 1000; i++) assertEquals(payload[i], view.get(JAVA_BYTE, i));
                assertEquals(payload[999], f.byteAt(999));
                // the view dies with the next receive: an exception, never freed memory
                assertTrue(a.send(new byte[] {42}, 0));
                assertTrue(b.recv(f, 0));
                assertThrows(IllegalStateException.class, () -> view.get(JAVA_BYTE, 0));
                assertEquals(42, f.byteAt(0));
            }
        }
    }

    private static long nativeSize(Frame f) throws Throwable {
        return (long) Native.zmq_msg_size.invokeExact(f.msgAddress());
    }

    @Test
    void aFramesSizeFollowsEverythingDoneToIt() throws Throwable {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR); Socket b = ctx.socket(SocketType.PAIR);
             Frame f = new Frame()) {
            a.bind("inproc://frame-size");
            b.connect("inproc://frame-size");
            assertEquals(0, f.size());
            f.allocate(7);
            assertEquals(7, f.size());
            f.allocate(3); // replaces a buffer that was never sent
            assertEquals(3, f.size());
            assertEquals(nativeSize(f), f.size());
            assertTrue(a.send(f, 0));
            assertEquals(0, f.size());
            assertEquals(nativeSize(f), f.size());
            assertTrue(b.recv(f, 0));
            assertEquals(3, f.size());
            a.send("hello", 0);
            assertTrue(b.recv(f, 0));
            assertEquals(5, f.size());
            assertEquals(nativeSize(f), f.size());
            assertFalse(b.recv(f, Zmq.DONTWAIT)); // may release the content: the frame asks
            assertEquals(nativeSize(f), f.size());
            a.send(new byte[0], 0);
            assertTrue(b.recv(f, 0));
            assertEquals(0, f.size());
            f.allocate(2); // releases the received message first
            assertEquals(2, f.size());
            f.message(); // native code may change it: the frame asks again
            assertEquals(nativeSize(f), f.size());
        }
    }

    @Test
    void largeFramesGoWithoutCopiesThroughFrames() {
        int size = 64 * 1024;
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PUSH); Socket b = ctx.socket(SocketType.PULL);
             Frame out = new Frame(); Frame in = new Frame()) {
            a.connect(b.bind("tcp://127.0.0.1:*"));
            for (int round = 0; round < 3; round++) {
                MemorySegment buf = out.allocate(size).buffer();
                for (int i = 0; i < size; i += 4096) buf.set(JAVA_BYTE, i, (byte) (i / 4096 + round));
                assertTrue(a.send(out, 0));
                assertEquals(0, out.size());
                assertTrue(b.recv(in, 0));
                assertEquals(size, in.size());
                for (int i = 0; i < size; i += 4096) assertEquals((byte) (i / 4096 + round), in.byteAt(i));
            }
        }
    }

    @Test
    void closedSocketAndClosedSegmentGiveExceptions() {
        try (Context ctx = new Context()) {
            Socket s = ctx.socket(SocketType.PAIR);
            s.bind("inproc://closed-test");
            s.close();
            s.close(); // idempotent
            assertThrows(IllegalStateException.class, () -> s.send(new byte[1], 0));
            assertThrows(IllegalStateException.class, () -> s.recv(new byte[1], 0));
            assertThrows(IllegalStateException.class, () -> s.get(SocketOption.LINGER));
            try (Socket a = ctx.socket(SocketType.PAIR); Socket b = ctx.socket(SocketType.PAIR)) {
                a.bind("inproc://seg");
                b.connect("inproc://seg");
                Arena arena = Arena.ofConfined();
                MemorySegment seg = arena.allocate(16);
                arena.close();
                assertThrows(IllegalStateException.class, () -> a.send(seg, 0));
                assertThrows(IllegalStateException.class, () -> b.recv(seg, 0));
            }
        }
        Context c = new Context();
        c.close();
        assertThrows(IllegalStateException.class, () -> c.socket(SocketType.PUB));
    }

    @Test
    void versionAndLibrary() {
        int[] v = Zmq.version();
        assertEquals(4, v[0]);
        assertNotNull(Zmq.library());
        assertFalse(Zmq.strerror(ZmqException.ETERM).isBlank());
    }
}
