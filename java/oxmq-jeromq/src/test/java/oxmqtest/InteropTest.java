package oxmqtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.zeromq.ZCert;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import guide.SecurePeer;

/**
 * oxmq (this JVM, through the org.zeromq API) against real peers in other processes: JeroMQ
 * 0.6.0 in a second JVM and libzmq 4.3 through pyzmq, both running the same request-reply
 * program ({@link SecurePeer}, secure_peer.py) with PLAIN or CURVE. Every combination of who
 * binds and who is the security server is run; a round trip only succeeds when both sides
 * agreed on the mechanism, and the negative cases show that oxmq's ZAuth really decides.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class InteropTest {
    private static final int N = 20;
    private static final long WAIT_S = 40;

    enum Peer { JEROMQ, LIBZMQ }

    static Stream<Arguments> matrix() {
        List<Arguments> l = new ArrayList<>();
        for (Peer peer : Peer.values())
            for (String mech : new String[] {"plain", "curve"})
                for (boolean oxmqBinds : new boolean[] {true, false})
                    for (boolean oxmqServer : new boolean[] {true, false})
                        l.add(Arguments.of(peer, mech, oxmqBinds, oxmqServer));
        return l.stream();
    }

    static Stream<Arguments> rejections() {
        List<Arguments> l = new ArrayList<>();
        for (Peer peer : Peer.values())
            for (String mech : new String[] {"plain", "curve"}) l.add(Arguments.of(peer, mech));
        return l.stream();
    }

    @ParameterizedTest(name = "{0} {1}: oxmq binds={2}, oxmq is the server={3}")
    @MethodSource("matrix")
    void roundTrips(Peer peer, String mech, boolean oxmqBinds, boolean oxmqServer) throws Exception {
        Map<String, String> common = keys(mech);
        common.put("password", "secret");
        common.put("timeout", "10000");
        String result = exchange(peer, common, oxmqBinds, oxmqServer, "OK");
        assertEquals("OK", result);
    }

    @ParameterizedTest(name = "{0} {1}: oxmq's ZAuth rejects the peer")
    @MethodSource("rejections")
    void oxmqServerRejectsBadCredentials(Peer peer, String mech, @TempDir Path certs) throws Exception {
        Map<String, String> common = keys(mech);
        common.put("password", "wrong");
        common.put("timeout", "1500");
        // The CURVE server allows only a certificate of some other key.
        new ZCert().savePublic(certs.resolve("other.pub").toString());
        common.put("allow", certs.toString());
        String result = exchange(peer, common, true, true, "TIMEOUT");
        assertEquals("TIMEOUT", result, "the oxmq server never receives a request");
    }

    private static Map<String, String> keys(String mech) {
        ZMQ.Curve.KeyPair server = ZMQ.Curve.generateKeyPair();
        ZMQ.Curve.KeyPair client = ZMQ.Curve.generateKeyPair();
        return new java.util.HashMap<>(Map.of("mech", mech, "n", String.valueOf(N), "user", "admin",
                "spub", server.publicKey, "ssec", server.secretKey, "cpub", client.publicKey, "csec", client.secretKey));
    }

    /** Runs the oxmq side here and the peer in its own process; returns oxmq's result after
     *  checking that the peer ended with {@code peerResult}. */
    private static String exchange(Peer peer, Map<String, String> common, boolean oxmqBinds, boolean oxmqServer,
            String peerResult) throws Exception {
        Map<String, String> mine = new java.util.HashMap<>(common);
        Map<String, String> theirs = new java.util.HashMap<>(common);
        mine.put("role", oxmqServer ? "server" : "client");
        theirs.put("role", oxmqServer ? "client" : "server");
        mine.put("mode", oxmqBinds ? "bind" : "connect");
        theirs.put("mode", oxmqBinds ? "connect" : "bind");
        if (!oxmqServer) theirs.remove("allow");
        // JeroMQ 0.6.0's connecting socket now and then never sends its greeting (against libzmq
        // too) and does not notice the listener giving up; its own handshake timer does, and it
        // then reconnects.
        if (peer == Peer.JEROMQ) theirs.put("handshake", "2000");
        try (ZContext ctx = new ZContext()) {
            PeerProcess p = null;
            try {
                CompletableFuture<String> ready = new CompletableFuture<>();
                CompletableFuture<String> mineDone;
                if (oxmqBinds) {
                    mine.put("endpoint", "tcp://127.0.0.1:*");
                    mineDone = runHere(ctx, mine, ready);
                    theirs.put("endpoint", ready.get(WAIT_S, TimeUnit.SECONDS));
                    p = PeerProcess.start(peer, theirs);
                } else {
                    theirs.put("endpoint", "tcp://127.0.0.1:*");
                    p = PeerProcess.start(peer, theirs);
                    mine.put("endpoint", p.awaitLine("READY ").substring("READY ".length()));
                    mineDone = runHere(ctx, mine, ready);
                }
                String result = mineDone.get(WAIT_S, TimeUnit.SECONDS);
                String theirResult = p.awaitLine("RESULT ").substring("RESULT ".length());
                assertEquals(peerResult, theirResult, "the peer's result (oxmq's: " + result + ", the peer ran "
                        + (System.nanoTime() - p.started) / 1_000_000 + " ms); its output:\n" + p.output());
                assertTrue(p.process.waitFor(WAIT_S, TimeUnit.SECONDS), "the peer exits");
                assertEquals(peerResult.equals("OK") ? 0 : 3, p.process.exitValue(), p.output());
                return result;
            } finally {
                if (p != null) p.process.destroyForcibly();
            }
        }
    }

    private static CompletableFuture<String> runHere(ZContext ctx, Map<String, String> args, CompletableFuture<String> ready) {
        CompletableFuture<String> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                done.complete(SecurePeer.run(ctx, args, ready::complete));
            } catch (Throwable e) {
                ready.completeExceptionally(e);
                done.completeExceptionally(e);
            }
        }, "oxmq-side");
        t.setDaemon(true);
        t.start();
        return done;
    }

    /** A peer process whose output lines are queued as they come. */
    static final class PeerProcess {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final StringBuilder all = new StringBuilder();
        final long started = System.nanoTime();

        private PeerProcess(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        synchronized (all) {
                            all.append(line).append('\n');
                        }
                        lines.add(line);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, "peer-output");
            reader.setDaemon(true);
            reader.start();
        }

        static PeerProcess start(Peer peer, Map<String, String> args) throws IOException {
            List<String> kv = new ArrayList<>();
            args.forEach((k, v) -> kv.add(k + "=" + v));
            List<String> cmd;
            if (peer == Peer.JEROMQ) {
                List<String> a = new ArrayList<>(List.of("peer"));
                a.addAll(kv);
                cmd = JeroMQ.command(a.toArray(new String[0]));
            } else {
                cmd = new ArrayList<>(List.of(System.getProperty("python", "python3"),
                        System.getProperty("python.peer", "src/test/python/secure_peer.py")));
                cmd.addAll(kv);
            }
            return new PeerProcess(new ProcessBuilder(cmd).redirectErrorStream(true).start());
        }

        /** The first line starting with {@code prefix}, waiting at most WAIT_S. */
        String awaitLine(String prefix) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) throw new AssertionError("no '" + prefix + "' line from the peer; its output:\n" + output());
                if (line.startsWith(prefix)) return line;
            }
        }

        String output() {
            synchronized (all) {
                return all.toString();
            }
        }
    }
}
