package io.oxmq.wiring.perf;

import io.oxmq.Frame;
import io.oxmq.wiring.Jzmq;

/**
 * {@code RemoteThr <host> <message-size> <message-count>}: binds the local exchange "E" to the
 * global queue "Q" (resolved through the name service at {@code host}), sends the messages and
 * waits, on close, until they are delivered (perf/wiring/c/remote_thr's contract). With
 * {@code frame} last, each message is a fresh library buffer sent without a copy.
 */
public final class RemoteThr {
    public static void main(String[] args) {
        boolean frames = Perf.frameMode(args, 3, "RemoteThr <host> <message-size> <message-count>");
        int size = Perf.count(args[1], "message-size");
        int count = Perf.count(args[2], "message-count");
        try (Jzmq w = new Jzmq(args[0])) {
            int eid = w.createExchange("E", Jzmq.SCOPE_LOCAL, "");
            w.bind("E", "Q");
            byte[] buf = new byte[size];
            try (Frame f = new Frame()) {
                for (long i = -(long) Perf.warmup(); i < count; i++) {
                    if (frames) {
                        w.send(eid, f.allocate(size));
                    } else {
                        w.send(eid, buf);
                    }
                }
            }
        }
    }
}
