package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/** {@code inproc_thr <message-size> <message-count>}: PUSH in a second thread to PULL over
 *  inproc, both with reused {@link Frame}s; prints libzmq's throughput lines. The first
 *  {@link Args#warmup()} messages are sent and received untimed. */
public final class InprocThr {
    public static void main(String[] args) throws InterruptedException {
        Args.need(args, 2, "inproc_thr <message-size> <message-count>");
        int size = Args.count(args[0], "message-size");
        int count = Args.count(args[1], "message-count");
        int warmup = Args.warmup();
        try (Context ctx = new Context(); Socket pull = ctx.socket(SocketType.PULL); Frame f = new Frame()) {
            pull.bind("inproc://thr_test");
            Thread sender = new Thread(() -> {
                try (Socket push = ctx.socket(SocketType.PUSH); Frame out = new Frame()) {
                    push.connect("inproc://thr_test");
                    for (long i = -(long) warmup; i < count; i++) {
                        out.allocate(size);
                        push.send(out, 0);
                    }
                }
            });
            sender.start();
            for (int i = 0; i < warmup; i++) pull.recv(f, 0);
            pull.recv(f, 0);
            long t0 = System.nanoTime();
            for (int i = 1; i < count; i++) {
                pull.recv(f, 0);
                if (f.size() != size) throw new IllegalStateException("message of wrong size");
            }
            long t1 = System.nanoTime();
            sender.join();
            Args.throughput(size, count, (t1 - t0) / 1000.0);
        }
    }
}
