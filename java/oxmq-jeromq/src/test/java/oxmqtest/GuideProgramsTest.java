package oxmqtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

import guide.CurveServer;
import guide.HwClient;
import guide.HwServer;
import guide.PsEnvPub;
import guide.PsEnvSub;
import guide.RrBroker;
import guide.TaskSink;
import guide.TaskVent;
import guide.TaskWork;

/**
 * The guide's Java programs (src/test/java/guide, written against JeroMQ's API and compiled
 * unchanged against it by {@link GuideSourcesCompileAgainstJeroMQTest}) run end to end on oxmq
 * over tcp on loopback. Threads that serve forever are stopped by interrupting them: a blocked
 * oxmq receive or poll returns as JeroMQ's does (null, -1).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GuideProgramsTest {
    private static final long WAIT_S = 20;

    private static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void stop(Thread... threads) throws InterruptedException {
        for (Thread t : threads) t.interrupt();
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            assertFalse(t.isAlive(), t.getName() + " did not stop when interrupted");
        }
    }

    @Test
    void helloWorldRequestReply() throws Exception {
        try (ZContext ctx = new ZContext()) {
            CompletableFuture<String> bound = new CompletableFuture<>();
            Thread server = start("hwserver", () -> HwServer.run(ctx, "tcp://127.0.0.1:*", 10, bound::complete));
            List<String> replies = HwClient.run(ctx, bound.get(WAIT_S, TimeUnit.SECONDS), 10);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < 10; i++) expected.add("World Hello" + i);
            assertEquals(expected, replies);
            server.join(TimeUnit.SECONDS.toMillis(WAIT_S));
            assertFalse(server.isAlive(), "the server serves exactly 10 requests and returns");
        }
    }

    @Test
    void pubSubEnvelopesDeliverOnlyTheSubscribedKey() throws Exception {
        try (ZContext ctx = new ZContext()) {
            CompletableFuture<String> bound = new CompletableFuture<>();
            Thread publisher = start("psenvpub", () -> PsEnvPub.run(ctx, "tcp://127.0.0.1:*", bound::complete));
            List<String> got = PsEnvSub.run(ctx, bound.get(WAIT_S, TimeUnit.SECONDS), 50);
            assertEquals(Collections.nCopies(50, "B : We would like to see this"), got);
            stop(publisher);
        }
    }

    @Test
    void pipelineVentilatorWorkersSink() throws Exception {
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket sender = ctx.createSocket(SocketType.PUSH);
            sender.bind("tcp://127.0.0.1:*");
            ZMQ.Socket receiver = ctx.createSocket(SocketType.PULL);
            receiver.bind("tcp://127.0.0.1:*");
            ZMQ.Socket sink = ctx.createSocket(SocketType.PUSH);
            sink.connect(receiver.getLastEndpoint());
            // Read before other threads use the sockets (they are not thread-safe).
            String vent = sender.getLastEndpoint(), sinkEndpoint = receiver.getLastEndpoint();
            Thread[] workers = new Thread[3];
            for (int i = 0; i < workers.length; i++) {
                workers[i] = start("taskwork-" + i, () -> TaskWork.run(ctx, vent, sinkEndpoint));
            }
            int tasks = 100;
            CompletableFuture<Integer> collected = CompletableFuture.supplyAsync(() -> TaskSink.run(receiver, tasks));
            int total = TaskVent.run(sender, sink, tasks);
            assertEquals(total, collected.get(WAIT_S, TimeUnit.SECONDS), "the sink sums every task's workload once");
            stop(workers);
        }
    }

    @Test
    void brokerWithPollerBetweenRouterAndDealer() throws Exception {
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket frontend = ctx.createSocket(SocketType.ROUTER);
            ZMQ.Socket backend = ctx.createSocket(SocketType.DEALER);
            frontend.bind("tcp://127.0.0.1:*");
            backend.bind("tcp://127.0.0.1:*");
            // Read before the broker thread owns the sockets (they are not thread-safe).
            String front = frontend.getLastEndpoint(), back = backend.getLastEndpoint();
            Thread broker = start("rrbroker", () -> RrBroker.run(ctx, frontend, backend));
            Thread[] workers = new Thread[2];
            for (int i = 0; i < workers.length; i++) {
                workers[i] = start("rrworker-" + i, () -> RrBroker.worker(ctx, back, Integer.MAX_VALUE));
            }
            List<CompletableFuture<List<String>>> clients = new ArrayList<>();
            for (int c = 0; c < 3; c++) {
                clients.add(CompletableFuture.supplyAsync(() -> HwClient.run(ctx, front, 20)));
            }
            for (CompletableFuture<List<String>> client : clients) {
                List<String> replies = client.get(WAIT_S, TimeUnit.SECONDS);
                for (int i = 0; i < 20; i++) assertEquals("World for Hello" + i, replies.get(i));
            }
            stop(workers);
            stop(broker);
        }
    }

    @Test
    void curveServerWithZAuthCertificateDirectory(@TempDir Path certs) throws Exception {
        try (ZContext ctx = new ZContext()) {
            assertEquals("Secret message", CurveServer.run(ctx, certs, true));
        }
    }

    @Test
    void curveServerWithZAuthRejectsAnUnknownClientKey(@TempDir Path certs) throws Exception {
        try (ZContext ctx = new ZContext()) {
            assertNull(CurveServer.run(ctx, certs, false), "a key not in the directory gets nothing");
            assertTrue(Files.exists(certs.resolve("unrelated.txt")));
        }
    }
}
