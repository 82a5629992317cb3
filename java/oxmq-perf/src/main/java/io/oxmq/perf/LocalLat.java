package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/** {@code local_lat <bind-to> <message-size> <roundtrip-count>}: a REP socket echoing each
 *  message back from the same {@link Frame} (no copy). */
public final class LocalLat {
    public static void main(String[] args) {
        Args.need(args, 3, "local_lat <bind-to> <message-size> <roundtrip-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "roundtrip-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.REP); Frame f = new Frame()) {
            s.bind(args[0]);
            for (long i = -(long) Args.warmup(); i < count; i++) {
                s.recv(f, 0);
                if (f.size() != size) throw new IllegalStateException("message of wrong size");
                s.send(f, 0);
            }
        }
    }
}
