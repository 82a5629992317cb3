package io.oxmq.wiring.perf;

import io.oxmq.Frame;
import io.oxmq.wiring.Jzmq;

/**
 * {@code LocalLat <host> <location> <message-size> <roundtrip-count>}: the echo side. Creates
 * the global queue "QG" and the global exchange "EG" at {@code location}, prints "ready" and
 * sends back every message it receives (perf/wiring/c/local_lat's contract); with
 * {@code frame} last, as {@link Frame}s, without copies.
 */
public final class LocalLat {
    public static void main(String[] args) {
        boolean frames = Perf.frameMode(args, 4, "LocalLat <host> <location> <message-size> <roundtrip-count>");
        int size = Perf.count(args[2], "message-size");
        int roundtrips = Perf.count(args[3], "roundtrip-count");
        try (Jzmq w = new Jzmq(args[0])) {
            w.createQueue("QG", Jzmq.SCOPE_GLOBAL, args[1]);
            int eid = w.createExchange("EG", Jzmq.SCOPE_GLOBAL, args[1]);
            System.out.println("ready");
            System.out.flush();
            byte[] buf = new byte[size + 1];
            try (Frame f = new Frame()) {
                for (long i = -(long) Perf.warmup(); i < roundtrips; i++) {
                    if (frames) {
                        // Echo the received frame itself: no copy.
                        Perf.check((int) w.receive(f), size);
                        w.send(eid, f);
                    } else {
                        int n = w.receive(buf);
                        Perf.check(n, size);
                        w.send(eid, buf, 0, n);
                    }
                }
            }
        }
    }
}
