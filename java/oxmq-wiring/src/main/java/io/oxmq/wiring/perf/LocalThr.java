package io.oxmq.wiring.perf;

import io.oxmq.Frame;
import io.oxmq.wiring.Jzmq;

/**
 * {@code LocalThr <host> <location> <message-size> <message-count>}: creates the global queue
 * "Q" at {@code location} with the name service at {@code host}, prints "ready", receives the
 * messages into one reused buffer and prints libzmq's throughput lines, timed from the first
 * message (perf/wiring/c/local_thr's contract). With {@code frame} last, into one reused
 * {@link Frame} (the library's buffer, no copy).
 */
public final class LocalThr {
    public static void main(String[] args) {
        boolean frames = Perf.frameMode(args, 4, "LocalThr <host> <location> <message-size> <message-count>");
        int size = Perf.count(args[2], "message-size");
        int count = Perf.count(args[3], "message-count");
        try (Jzmq w = new Jzmq(args[0])) {
            w.createQueue("Q", Jzmq.SCOPE_GLOBAL, args[1]);
            System.out.println("ready");
            System.out.flush();
            byte[] buf = new byte[size + 1];
            try (Frame f = new Frame()) {
                long t0 = 0;
                for (long i = -(long) Perf.warmup(); i < count; i++) {
                    Perf.check(frames ? (int) w.receive(f) : w.receive(buf), size);
                    if (i == 0) {
                        t0 = System.nanoTime();
                    }
                }
                Perf.throughput(size, count, (System.nanoTime() - t0) / 1000.0);
            }
        }
    }
}
