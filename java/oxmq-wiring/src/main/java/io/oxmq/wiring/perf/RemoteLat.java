package io.oxmq.wiring.perf;

import io.oxmq.Frame;
import io.oxmq.wiring.Jzmq;

/**
 * {@code RemoteLat <host> <message-size> <roundtrip-count>}: the measuring side. Binds the local
 * exchange "EL" to the global queue "QG" and the global exchange "EG" to the local queue "QL",
 * times the round trips and prints half of one (perf/wiring/c/remote_lat's contract); with
 * {@code frame} last, each request is a fresh library buffer and the reply is received into a
 * {@link Frame}, without copies.
 */
public final class RemoteLat {
    public static void main(String[] args) {
        boolean frames = Perf.frameMode(args, 3, "RemoteLat <host> <message-size> <roundtrip-count>");
        int size = Perf.count(args[1], "message-size");
        int roundtrips = Perf.count(args[2], "roundtrip-count");
        try (Jzmq w = new Jzmq(args[0])) {
            int eid = w.createExchange("EL", Jzmq.SCOPE_LOCAL, "");
            w.createQueue("QL", Jzmq.SCOPE_LOCAL, "");
            // The queue side first: its subscription reaches EG long before the first reply.
            w.bind("EG", "QL");
            w.bind("EL", "QG");
            byte[] buf = new byte[size + 1];
            try (Frame f = new Frame()) {
                long t0 = 0;
                for (long i = -(long) Perf.warmup(); i < roundtrips; i++) {
                    if (i == 0) {
                        t0 = System.nanoTime();
                    }
                    if (frames) {
                        w.send(eid, f.allocate(size));
                        Perf.check((int) w.receive(f), size);
                    } else {
                        w.send(eid, buf, 0, size);
                        Perf.check(w.receive(buf), size);
                    }
                }
                Perf.latency(size, roundtrips, (System.nanoTime() - t0) / 1000.0);
            }
        }
    }
}
