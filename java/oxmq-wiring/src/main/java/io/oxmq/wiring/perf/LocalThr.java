package io.oxmq.wiring.perf;

import io.oxmq.wiring.Jzmq;

/**
 * {@code LocalThr <host> <location> <message-size> <message-count>}: creates the global queue
 * "Q" at {@code location} with the name service at {@code host}, prints "ready", receives the
 * messages into one reused buffer and prints libzmq's throughput lines, timed from the first
 * message (perf/wiring/c/local_thr's contract).
 */
public final class LocalThr {
    public static void main(String[] args) {
        Perf.need(args, 4, "LocalThr <host> <location> <message-size> <message-count>");
        int size = Perf.count(args[2], "message-size");
        int count = Perf.count(args[3], "message-count");
        try (Jzmq w = new Jzmq(args[0])) {
            w.createQueue("Q", Jzmq.SCOPE_GLOBAL, args[1]);
            System.out.println("ready");
            System.out.flush();
            byte[] buf = new byte[size + 1];
            for (int i = Perf.warmup(); i > 0; i--) {
                Perf.check(w.receive(buf), size);
            }
            Perf.check(w.receive(buf), size);
            long t0 = System.nanoTime();
            for (int i = 1; i < count; i++) {
                Perf.check(w.receive(buf), size);
            }
            Perf.throughput(size, count, (System.nanoTime() - t0) / 1000.0);
        }
    }
}
