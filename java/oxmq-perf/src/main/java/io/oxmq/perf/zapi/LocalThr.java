package io.oxmq.perf.zapi;

import io.oxmq.perf.Args;
import org.zeromq.ZMQ;

/** local_thr on the org.zeromq API: PULL, receiving into one reused array. */
public final class LocalThr {
    public static void main(String[] args) {
        Args.need(args, 3, "local_thr <bind-to> <message-size> <message-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "message-count");
        ZMQ.Context ctx = ZMQ.context(1);
        ZMQ.Socket s = ctx.socket(ZMQ.PULL);
        Z.bind(s, args[0]);
        byte[] buf = new byte[size];
        for (int i = Args.warmup(); i > 0; i--) s.recv(buf, 0, size, 0);
        if (s.recv(buf, 0, size, 0) != size) throw new IllegalStateException("message of wrong size");
        long t0 = System.nanoTime();
        for (int i = 1; i < count; i++) {
            if (s.recv(buf, 0, size, 0) != size) throw new IllegalStateException("message of wrong size");
        }
        long t1 = System.nanoTime();
        Args.throughput(size, count, (t1 - t0) / 1000.0);
        s.close();
        ctx.term();
    }
}
