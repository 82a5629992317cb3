package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.*;

/** Blocked calls end on interruption and on context close; concurrent use is refused. */
@Timeout(30)
class BlockingTest {
    /** Waits (bounded by the class timeout) until {@code t} is parked inside a native recv:
     *  another thread's DONTWAIT call on the same socket is then refused. */
    private static void awaitInside(Socket s, Thread t) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (;;) {
            assertTrue(t.isAlive(), "the receiving thread ended early");
            assertTrue(System.nanoTime() < deadline, "the receiving thread never blocked");
            try {
                s.recv(new byte[1], Zmq.DONTWAIT);
            } catch (IllegalStateException busy) {
                return;
            }
            Thread.onSpinWait();
        }
    }

    /** Runs {@code r}, again while it meets the test thread's own probe inside the socket. */
    private static void retryingBusy(Runnable r) {
        for (;;) {
            try {
                r.run();
                return;
            } catch (IllegalStateException probeWasInside) {
                Thread.onSpinWait();
            }
        }
    }

    @Test
    void interruptEndsABlockedRecv() throws Exception {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL)) {
            pull.bind("inproc://interrupt");
            AtomicReference<Throwable> got = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            Thread t = new Thread(() -> {
                try {
                    retryingBusy(() -> pull.recv(new byte[16], 0));
                } catch (Throwable e) {
                    got.set(e);
                    assertTrue(Thread.currentThread().isInterrupted());
                }
                done.countDown();
            });
            t.start();
            awaitInside(pull, t);
            t.interrupt();
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertInstanceOf(ZmqInterruptedException.class, got.get());
            assertEquals(ZmqException.EINTR, ((ZmqException) got.get()).errno());
            // the socket still works
            try (Socket push = ctx.socket(SocketType.PUSH)) {
                push.connect("inproc://interrupt");
                push.send("after", 0);
                assertEquals("after", pull.recvStr(0));
            }
        }
    }

    @Test
    void interruptEndsABlockedPollAndFrameRecv() throws Exception {
        try (Context ctx = new Context(); Socket sub = ctx.socket(SocketType.SUB); Poller poller = new Poller()) {
            sub.bind("tcp://127.0.0.1:*");
            poller.register(sub, Zmq.POLLIN);
            CompletableFuture<Throwable> f = CompletableFuture.supplyAsync(() -> {
                Thread.currentThread().interrupt();
                try {
                    poller.poll(-1);
                    return null;
                } catch (Throwable e) {
                    Thread.interrupted();
                    return e;
                }
            });
            assertInstanceOf(ZmqInterruptedException.class, f.get(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void contextCloseEndsABlockedRecvWithEterm() throws Exception {
        Context ctx = new Context();
        Socket pull = ctx.socket(SocketType.PULL);
        pull.bind("tcp://127.0.0.1:*");
        AtomicReference<Throwable> got = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try (Frame f = new Frame()) {
                retryingBusy(() -> pull.recv(f, 0));
            } catch (Throwable e) {
                got.set(e);
            }
        });
        t.start();
        awaitInside(pull, t);
        ctx.close(); // must not hang although the socket was busy in another thread
        t.join(10_000);
        assertFalse(t.isAlive());
        assertInstanceOf(TermException.class, got.get());
        assertEquals(ZmqException.ETERM, ((ZmqException) got.get()).errno());
        assertTrue(pull.isClosed());
        assertThrows(IllegalStateException.class, () -> pull.recv(new byte[1], 0));
        pull.close(); // harmless
    }

    @Test
    void contextCloseClosesIdleSocketsAndProxies() throws Exception {
        Context ctx = new Context();
        Socket idle = ctx.socket(SocketType.DEALER);
        idle.connect("tcp://127.0.0.1:1"); // never connects; linger must not hold close
        idle.set(SocketOption.LINGER, 0);
        idle.send("queued", 0);
        Socket front = ctx.socket(SocketType.ROUTER), back = ctx.socket(SocketType.DEALER);
        front.bind("inproc://front");
        back.bind("inproc://back");
        CompletableFuture<Throwable> proxy = CompletableFuture.supplyAsync(() -> {
            try {
                Proxy.run(front, back, null);
                return null;
            } catch (Throwable e) {
                return e;
            }
        });
        // Wait until the proxy holds its sockets, without entering them here: a probe that
        // entered a socket could make the proxy's own entry fail.
        while (!front.busy() || !back.busy()) {
            assertFalse(proxy.isDone(), () -> "the proxy ended early: " + proxy.join());
            Thread.onSpinWait();
        }
        ctx.close();
        assertInstanceOf(TermException.class, proxy.get(10, TimeUnit.SECONDS));
        assertTrue(idle.isClosed());
        assertTrue(ctx.sockets().isEmpty());
    }

    @Test
    void secondThreadInsideANonThreadSafeSocketIsRefused() throws Exception {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL)) {
            pull.bind("inproc://busy");
            Thread t = new Thread(() -> {
                try {
                    retryingBusy(() -> pull.recv(new byte[1], 0));
                } catch (ZmqException expected) {
                    // interrupted below
                }
            });
            t.start();
            awaitInside(pull, t);
            IllegalStateException e = assertThrows(IllegalStateException.class, pull::close);
            assertTrue(e.getMessage().contains("another thread"), e.getMessage());
            t.interrupt();
            t.join(10_000);
            assertFalse(t.isAlive());
        }
    }

    @Test
    void aFrameInsideABlockedReceiveIsRefusedToOtherThreads() throws Exception {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Frame f = new Frame()) {
            pull.bind("inproc://frame-busy");
            Thread t = new Thread(() -> {
                try {
                    retryingBusy(() -> pull.recv(f, 0));
                } catch (ZmqException expected) {
                    // interrupted below
                }
            });
            t.start();
            long deadline = System.nanoTime() + 10_000_000_000L;
            for (boolean inside = false; !inside; ) { // until the receiver holds the frame
                assertTrue(t.isAlive() && System.nanoTime() < deadline, "the receiving thread never blocked");
                try {
                    f.hasMore();
                    Thread.onSpinWait();
                } catch (IllegalStateException busy) {
                    inside = true;
                }
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, f::close);
            assertTrue(e.getMessage().contains("another thread"), e.getMessage());
            e = assertThrows(IllegalStateException.class, () -> f.allocate(4));
            assertTrue(e.getMessage().contains(t.getName()), e.getMessage());
            t.interrupt();
            t.join(10_000);
            assertFalse(t.isAlive());
            f.allocate(3); // the frame moves to this thread
            assertEquals(3, f.size());
        }
    }

    @Test
    void aPollerWaitingInOneThreadIsRefusedToAnother() throws Exception {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL);
             Socket other = ctx.socket(SocketType.PULL); Poller poller = new Poller()) {
            pull.bind("inproc://poller-busy");
            poller.register(pull, Zmq.POLLIN);
            AtomicReference<Throwable> got = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    retryingBusy(() -> poller.poll(-1));
                } catch (Throwable e) {
                    got.set(e);
                }
            });
            t.start();
            long deadline = System.nanoTime() + 10_000_000_000L;
            for (boolean inside = false; !inside; ) { // until the other thread polls
                assertTrue(t.isAlive() && System.nanoTime() < deadline, "the polling thread never blocked");
                try {
                    poller.unregister(other); // registered nowhere: changes nothing
                    Thread.onSpinWait();
                } catch (IllegalStateException busy) {
                    inside = true;
                }
            }
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> poller.register(other, Zmq.POLLIN));
            assertTrue(e.getMessage().contains(t.getName()), e.getMessage());
            t.interrupt();
            t.join(10_000);
            assertFalse(t.isAlive());
            assertInstanceOf(ZmqInterruptedException.class, got.get());
            assertEquals(1, poller.register(other, Zmq.POLLIN)); // the poller moves to this thread
        }
    }

    @Test
    void aSocketMayMoveBetweenThreads() throws Exception {
        try (Context ctx = new Context(); Socket a = ctx.socket(SocketType.PAIR); Socket b = ctx.socket(SocketType.PAIR)) {
            a.bind("inproc://move");
            b.connect("inproc://move");
            CompletableFuture.runAsync(() -> a.send("from another thread", 0)).get(10, TimeUnit.SECONDS);
            assertEquals("from another thread", b.recvStr(0));
        }
    }
}
