package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/**
 * {@code local_thr <bind-to> <message-size> <message-count>}: binds a PULL socket and receives
 * into one reused {@link Frame} (the library's buffer, no copy), as libzmq's tool does with one
 * zmq_msg_t; prints libzmq's throughput lines.
 */
public final class LocalThr {
    public static void main(String[] args) {
        Args.need(args, 3, "local_thr <bind-to> <message-size> <message-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "message-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PULL); Frame f = new Frame()) {
            s.bind(args[0]);
            for (int i = Args.warmup(); i > 0; i--) s.recv(f, 0);
            s.recv(f, 0);
            if (f.size() != size) throw new IllegalStateException("message of wrong size");
            long t0 = System.nanoTime();
            for (int i = 1; i < count; i++) {
                s.recv(f, 0);
                if (f.size() != size) throw new IllegalStateException("message of wrong size");
            }
            long t1 = System.nanoTime();
            Args.throughput(size, count, (t1 - t0) / 1000.0);
        }
    }
}
