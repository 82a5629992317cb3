package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/** {@code remote_lat <connect-to> <message-size> <roundtrip-count>}: a REQ socket timing
 *  round trips of one {@link Frame}; prints libzmq's latency lines (half a round trip). */
public final class RemoteLat {
    public static void main(String[] args) {
        Args.need(args, 3, "remote_lat <connect-to> <message-size> <roundtrip-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "roundtrip-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.REQ); Frame f = new Frame()) {
            s.connect(args[0]);
            f.allocate(size);
            for (int i = Args.warmup(); i > 0; i--) {
                s.send(f, 0);
                s.recv(f, 0);
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                s.send(f, 0);
                s.recv(f, 0);
                if (f.size() != size) throw new IllegalStateException("message of wrong size");
            }
            long t1 = System.nanoTime();
            Args.latency(size, count, (t1 - t0) / 1000.0);
        }
    }
}
