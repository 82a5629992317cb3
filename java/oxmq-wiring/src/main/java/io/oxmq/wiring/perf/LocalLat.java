package io.oxmq.wiring.perf;

import io.oxmq.wiring.Jzmq;

/**
 * {@code LocalLat <host> <location> <message-size> <roundtrip-count>}: the echo side. Creates
 * the global queue "QG" and the global exchange "EG" at {@code location}, prints "ready" and
 * sends back every message it receives (perf/wiring/c/local_lat's contract).
 */
public final class LocalLat {
    public static void main(String[] args) {
        Perf.need(args, 4, "LocalLat <host> <location> <message-size> <roundtrip-count>");
        int size = Perf.count(args[2], "message-size");
        int roundtrips = Perf.count(args[3], "roundtrip-count");
        try (Jzmq w = new Jzmq(args[0])) {
            w.createQueue("QG", Jzmq.SCOPE_GLOBAL, args[1]);
            int eid = w.createExchange("EG", Jzmq.SCOPE_GLOBAL, args[1]);
            System.out.println("ready");
            System.out.flush();
            byte[] buf = new byte[size + 1];
            for (long i = -(long) Perf.warmup(); i < roundtrips; i++) {
                int n = w.receive(buf);
                Perf.check(n, size);
                w.send(eid, buf, 0, n);
            }
        }
    }
}
