package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/** {@code local_lat <bind-to> <message-size> <roundtrip-count>}: a REP socket echoing each
 *  message back from the same {@link Frame} (no copy), or with a last argument {@code bytes}
 *  from one reused array (a copy each way). */
public final class LocalLat {
    public static void main(String[] args) {
        boolean bytes = Args.bytesMode(args, 3, "local_lat <bind-to> <message-size> <roundtrip-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "roundtrip-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.REP); Frame f = new Frame()) {
            s.bind(args[0]);
            byte[] buf = new byte[size + 1];
            for (long i = -(long) Args.warmup(); i < count; i++) {
                if (bytes) {
                    Args.check(s.recv(buf, 0), size);
                    s.send(buf, 0, size, 0);
                } else {
                    s.recv(f, 0);
                    Args.check(f.size(), size);
                    s.send(f, 0);
                }
            }
        }
    }
}
