package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.*;

/** Connects that follow DNS, the socket's metrics name and the metrics text (oxmq only). */
@Timeout(60)
class OpsTest {
    @Test
    void followedNameReachesThePeerAndOptionsReadBack() {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Socket push = ctx.socket(SocketType.PUSH)) {
            String ep = pull.bind("tcp://127.0.0.1:*");
            String port = ep.substring(ep.lastIndexOf(':') + 1);
            assertFalse(push.get(SocketOption.OXMQ_DNS_FOLLOW));
            assertEquals(30000, push.get(SocketOption.OXMQ_DNS_IVL));
            push.set(SocketOption.OXMQ_DNS_FOLLOW, true);
            push.set(SocketOption.OXMQ_DNS_IVL, 1000);
            ZmqException e = assertThrows(ZmqException.class, () -> push.set(SocketOption.OXMQ_DNS_IVL, 5));
            assertEquals(ZmqException.EINVAL, e.errno());
            assertTrue(push.get(SocketOption.OXMQ_DNS_FOLLOW));
            push.connect("tcp://localhost:" + port);
            for (int i = 0; i < 5; i++) push.send("n" + i, 0);
            pull.set(SocketOption.RCVTIMEO, 5000);
            for (int i = 0; i < 5; i++) assertEquals("n" + i, pull.recvStr(0));
            push.disconnect("tcp://localhost:" + port);
        }
    }

    @Test
    void metricsCarryTheSocketsName() throws Exception {
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Socket push = ctx.socket(SocketType.PUSH)) {
            pull.set(SocketOption.OXMQ_NAME, "orders");
            assertEquals("orders", pull.get(SocketOption.OXMQ_NAME));
            assertThrows(ZmqException.class, () -> pull.set(SocketOption.OXMQ_NAME, "no spaces"));
            pull.bind("inproc://java-ops");
            push.connect("inproc://java-ops");
            push.send("a", 0);
            push.send("b", 0);
            assertEquals("a", pull.recvStr(0));
            assertEquals("b", pull.recvStr(0));
            // Another thread waits in recv, so the PULL answers the snapshot request at once.
            Thread t = new Thread(() -> {
                try {
                    pull.set(SocketOption.RCVTIMEO, 10000);
                    pull.recvStr(0);
                } catch (RuntimeException ignored) {
                }
            });
            t.start();
            String want = "oxmq_socket_received_messages_total{type=\"PULL\",name=\"orders\",endpoint=\"inproc://java-ops\"} 2\n";
            String text = "";
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!text.contains(want) && System.nanoTime() < deadline) text = ctx.metrics(200);
            assertTrue(text.contains(want), text);
            assertTrue(text.contains("# TYPE oxmq_socket_received_messages_total counter"));
            push.send("c", 0);
            t.join();
        }
    }
}
