package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/** {@code inproc_lat <message-size> <roundtrip-count>}: REQ/REP over inproc between two
 *  threads; prints libzmq's latency lines. The first {@link Args#warmup()} round trips are
 *  untimed. */
public final class InprocLat {
    public static void main(String[] args) throws InterruptedException {
        Args.need(args, 2, "inproc_lat <message-size> <roundtrip-count>");
        int size = Args.count(args[0], "message-size");
        int count = Args.count(args[1], "roundtrip-count");
        int warmup = Args.warmup();
        try (Context ctx = new Context(); Socket req = ctx.socket(SocketType.REQ); Frame f = new Frame()) {
            req.bind("inproc://lat_test");
            Thread echo = new Thread(() -> {
                try (Socket rep = ctx.socket(SocketType.REP); Frame g = new Frame()) {
                    rep.connect("inproc://lat_test");
                    for (long i = -(long) warmup; i < count; i++) {
                        rep.recv(g, 0);
                        rep.send(g, 0);
                    }
                }
            });
            echo.start();
            f.allocate(size);
            for (int i = 0; i < warmup; i++) {
                req.send(f, 0);
                req.recv(f, 0);
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                req.send(f, 0);
                req.recv(f, 0);
                if (f.size() != size) throw new IllegalStateException("message of wrong size");
            }
            long t1 = System.nanoTime();
            echo.join();
            Args.latency(size, count, (t1 - t0) / 1000.0);
        }
    }
}
