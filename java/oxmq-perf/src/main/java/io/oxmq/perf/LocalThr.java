package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/**
 * {@code local_thr <bind-to> <message-size> <message-count>}: binds a PULL socket and receives
 * into one reused {@link Frame} (the library's buffer, no copy), as libzmq's tool does with one
 * zmq_msg_t; prints libzmq's throughput lines. With a last argument {@code bytes} it receives
 * into one reused array instead (a copy per message, no allocation).
 */
public final class LocalThr {
    public static void main(String[] args) {
        boolean bytes = Args.bytesMode(args, 3, "local_thr <bind-to> <message-size> <message-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "message-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PULL); Frame f = new Frame()) {
            s.bind(args[0]);
            byte[] buf = new byte[size + 1];
            for (int i = Args.warmup(); i > 0; i--) {
                if (bytes) s.recv(buf, 0); else s.recv(f, 0);
            }
            Args.check(bytes ? s.recv(buf, 0) : recv(s, f), size);
            long t0 = System.nanoTime();
            for (int i = 1; i < count; i++) {
                Args.check(bytes ? s.recv(buf, 0) : recv(s, f), size);
            }
            long t1 = System.nanoTime();
            Args.throughput(size, count, (t1 - t0) / 1000.0);
        }
    }

    private static long recv(Socket s, Frame f) {
        s.recv(f, 0);
        return f.size();
    }
}
