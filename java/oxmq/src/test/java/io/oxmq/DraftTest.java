package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** The draft socket types through the binding (issue 44): routing ids, groups, PEER's
 *  connect, and the thread-safe types used from several threads at once. JeroMQ interop of the
 *  same types is in oxmq-jeromq's tests. */
@Timeout(60)
class DraftTest {
    static Socket sock(Context ctx, SocketType t) {
        Socket s = ctx.socket(t);
        s.set(SocketOption.LINGER, 0);
        s.set(SocketOption.RCVTIMEO, 10_000);
        s.set(SocketOption.SNDTIMEO, 10_000);
        return s;
    }

    static String str(Frame f) {
        return f.toStringUtf8();
    }

    @Test
    void serverClientRoutingIds() {
        try (Context ctx = new Context(); Socket srv = sock(ctx, SocketType.SERVER);
             Socket a = sock(ctx, SocketType.CLIENT); Socket b = sock(ctx, SocketType.CLIENT);
             Frame in = new Frame()) {
            String ep = srv.bind("tcp://127.0.0.1:*");
            a.connect(ep);
            b.connect(ep);
            a.send("from a", 0);
            assertTrue(srv.recv(in, 0));
            assertEquals("from a", str(in));
            int ida = in.routingId();
            b.send("from b", 0);
            assertTrue(srv.recv(in, 0));
            int idb = in.routingId();
            assertNotEquals(0, ida);
            assertNotEquals(ida, idb);
            try (Frame r = Frame.of("to b".getBytes(StandardCharsets.UTF_8))) {
                assertTrue(srv.send(r.setRoutingId(idb), 0));
            }
            assertEquals("to b", b.recvStr(0));
            try (Frame r = Frame.of("nobody".getBytes(StandardCharsets.UTF_8))) {
                ZmqException e = assertThrows(ZmqException.class, () -> srv.send(r.setRoutingId(ida + idb + 7), 0));
                assertEquals(ZmqException.EHOSTUNREACH, e.errno());
                assertEquals(ZmqException.EINVAL, assertThrows(ZmqException.class, () -> r.setRoutingId(0)).errno());
            }
            // Single-part only.
            assertEquals(ZmqException.EINVAL, assertThrows(ZmqException.class, () -> a.send("x", Zmq.SNDMORE)).errno());
        }
    }

    @Test
    void radioDishGroups() {
        try (Context ctx = new Context(); Socket dish = sock(ctx, SocketType.DISH); Socket radio = sock(ctx, SocketType.RADIO);
             Frame in = new Frame()) {
            radio.connect(dish.bind("tcp://127.0.0.1:*"));
            dish.join("weather");
            dish.join("sports");
            assertEquals(ZmqException.EINVAL, assertThrows(ZmqException.class, () -> dish.join("weather")).errno());
            assertEquals(ZmqException.EINVAL, assertThrows(ZmqException.class, () -> dish.join("x".repeat(256))).errno());
            // Until the JOINs have reached the radio: probed on the group joined last, since
            // the JOINs travel in order.
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (true) {
                try (Frame p = Frame.of("probe".getBytes(StandardCharsets.UTF_8))) {
                    radio.send(p.setGroup("sports"), 0);
                }
                if (dish.recv(in, Zmq.DONTWAIT)) break;
                assertTrue(System.nanoTime() < end, "the JOIN never reached the radio");
                Thread.onSpinWait();
            }
            // Probes still on their way are ahead of a fence, which the connection keeps in order.
            try (Frame f = Frame.of("fence".getBytes(StandardCharsets.UTF_8))) {
                radio.send(f.setGroup("sports"), 0);
            }
            do {
                assertTrue(dish.recv(in, 0));
            } while (!str(in).equals("fence"));
            for (String[] gm : new String[][] {{"politics", "never"}, {"sports", "goal"}, {"weather", "rain"}}) {
                try (Frame f = Frame.of(gm[1].getBytes(StandardCharsets.UTF_8))) {
                    radio.send(f.setGroup(gm[0]), 0);
                }
            }
            assertTrue(dish.recv(in, 0));
            assertEquals("sports/goal", in.group() + "/" + str(in));
            assertTrue(dish.recv(in, 0));
            assertEquals("weather/rain", in.group() + "/" + str(in));
            dish.leave("sports");
            assertEquals(ZmqException.EINVAL, assertThrows(ZmqException.class, () -> dish.leave("sports")).errno());
            try (Socket srv = sock(ctx, SocketType.SERVER)) {
                assertEquals(ZmqException.ENOTSUP, assertThrows(ZmqException.class, () -> srv.join("g")).errno());
            }
        }
    }

    @Test
    void scatterGatherChannelAndPeer() {
        try (Context ctx = new Context(); Socket g = sock(ctx, SocketType.GATHER); Socket s = sock(ctx, SocketType.SCATTER);
             Socket c1 = sock(ctx, SocketType.CHANNEL); Socket c2 = sock(ctx, SocketType.CHANNEL);
             Socket p1 = sock(ctx, SocketType.PEER); Socket p2 = sock(ctx, SocketType.PEER); Frame in = new Frame()) {
            s.connect(g.bind("tcp://127.0.0.1:*"));
            for (int i = 0; i < 10; i++) s.send("s" + i, 0);
            for (int i = 0; i < 10; i++) assertEquals("s" + i, g.recvStr(0));
            c2.connect(c1.bind("tcp://127.0.0.1:*"));
            c2.send("ping", 0);
            assertEquals("ping", c1.recvStr(0));
            c1.send("pong", 0);
            assertEquals("pong", c2.recvStr(0));
            int id = p2.connectPeer(p1.bind("tcp://127.0.0.1:*"));
            assertNotEquals(0, id);
            try (Frame f = Frame.of("first".getBytes(StandardCharsets.UTF_8))) {
                assertTrue(p2.send(f.setRoutingId(id), 0)); // speaks first
            }
            assertTrue(p1.recv(in, 0));
            assertEquals("first", str(in));
            try (Frame f = Frame.of("back".getBytes(StandardCharsets.UTF_8))) {
                assertTrue(p1.send(f.setRoutingId(in.routingId()), 0));
            }
            assertTrue(p2.recv(in, 0));
            assertEquals(id, in.routingId());
            assertEquals("back", str(in));
        }
    }

    /** As in libzmq, several threads use one thread-safe socket at once: four send on a CLIENT
     *  while one receives on the SERVER and another sends on it, each with its own calls'
     *  buffers (a shared receive message or option buffer would mix their results up). */
    @Test
    void threadSafeTypesAcrossThreads() throws Exception {
        try (Context ctx = new Context(); Socket srv = sock(ctx, SocketType.SERVER); Socket cli = sock(ctx, SocketType.CLIENT);
             Frame in = new Frame()) {
            cli.connect(srv.bind("tcp://127.0.0.1:*"));
            cli.send("hi", 0);
            assertTrue(srv.recv(in, 0));
            int id = in.routingId();
            // Threads of their own (the common pool may have one worker on a small machine).
            java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newCachedThreadPool();
            CompletableFuture<List<String>> received = CompletableFuture.supplyAsync(() -> {
                List<String> got = new ArrayList<>();
                for (int i = 0; i < 400; i++) got.add(srv.recvStr(0));
                return got;
            }, pool);
            List<CompletableFuture<Void>> senders = new ArrayList<>();
            for (int k = 0; k < 4; k++) {
                int kk = k;
                senders.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 100; i++) {
                        cli.send(kk + ":" + i, 0);
                        assertEquals(10_000, (int) cli.get(SocketOption.RCVTIMEO)); // options too
                    }
                }, pool));
            }
            CompletableFuture<Void> down = CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 50; i++) {
                    try (Frame f = Frame.of(("down " + i).getBytes(StandardCharsets.UTF_8))) {
                        srv.send(f.setRoutingId(id), 0);
                    }
                }
            }, pool);
            for (CompletableFuture<Void> s : senders) s.get(20, TimeUnit.SECONDS);
            down.get(20, TimeUnit.SECONDS);
            Set<String> got = new HashSet<>(received.get(20, TimeUnit.SECONDS));
            Set<String> want = new HashSet<>();
            for (int k = 0; k < 4; k++) for (int i = 0; i < 100; i++) want.add(k + ":" + i);
            assertEquals(want, got);
            List<String> replies = new ArrayList<>();
            for (int i = 0; i < 50; i++) replies.add(cli.recvStr(0));
            List<String> wantReplies = new ArrayList<>();
            for (int i = 0; i < 50; i++) wantReplies.add("down " + i);
            assertEquals(wantReplies, replies);
            pool.shutdown();
        }
    }

    @Test
    void pollerWithDraftSockets() {
        try (Context ctx = new Context(); Socket srv = sock(ctx, SocketType.SERVER); Socket cli = sock(ctx, SocketType.CLIENT);
             Socket dish = sock(ctx, SocketType.DISH); Socket radio = sock(ctx, SocketType.RADIO); Poller p = new Poller(2);
             Frame in = new Frame()) {
            cli.connect(srv.bind("tcp://127.0.0.1:*"));
            radio.connect(dish.bind("tcp://127.0.0.1:*"));
            dish.join("g");
            int is = p.register(srv, Zmq.POLLIN), id = p.register(dish, Zmq.POLLIN);
            assertEquals(0, p.poll(0));
            cli.send("c", 0);
            assertEquals(1, p.poll(5000));
            assertTrue(p.isReadable(is));
            assertEquals("c", srv.recvStr(0));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (p.poll(20) == 0) {
                try (Frame f = Frame.of("r".getBytes(StandardCharsets.UTF_8))) {
                    radio.send(f.setGroup("g"), 0);
                }
                assertTrue(System.nanoTime() < end, "the JOIN never reached the radio");
            }
            assertTrue(p.isReadable(id));
            assertTrue(dish.recv(in, 0));
            assertEquals("g", in.group());
        }
    }
}
