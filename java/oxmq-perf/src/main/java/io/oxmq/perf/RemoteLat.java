package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/** {@code remote_lat <connect-to> <message-size> <roundtrip-count>}: a REQ socket timing
 *  round trips of one {@link Frame}, or with a last argument {@code bytes} of one array (a
 *  copy each way); prints libzmq's latency lines (half a round trip). */
public final class RemoteLat {
    public static void main(String[] args) {
        boolean bytes = Args.bytesMode(args, 3, "remote_lat <connect-to> <message-size> <roundtrip-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "roundtrip-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.REQ); Frame f = new Frame()) {
            s.connect(args[0]);
            f.allocate(size);
            byte[] data = new byte[size];
            byte[] buf = new byte[size + 1];
            for (int i = Args.warmup(); i > 0; i--) {
                roundTrip(s, f, bytes, data, buf);
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                Args.check(roundTrip(s, f, bytes, data, buf), size);
            }
            long t1 = System.nanoTime();
            Args.latency(size, count, (t1 - t0) / 1000.0);
        }
    }

    /** One request and its reply; the reply's size. */
    private static long roundTrip(Socket s, Frame f, boolean bytes, byte[] data, byte[] buf) {
        if (bytes) {
            s.send(data, 0);
            return s.recv(buf, 0);
        }
        s.send(f, 0);
        s.recv(f, 0);
        return f.size();
    }
}
