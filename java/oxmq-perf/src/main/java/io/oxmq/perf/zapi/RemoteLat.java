package io.oxmq.perf.zapi;

import io.oxmq.perf.Args;
import org.zeromq.ZMQ;

/** remote_lat on the org.zeromq API: REQ timing round trips of one array. */
public final class RemoteLat {
    public static void main(String[] args) {
        Args.need(args, 3, "remote_lat <connect-to> <message-size> <roundtrip-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "roundtrip-count");
        ZMQ.Context ctx = ZMQ.context(1);
        ZMQ.Socket s = ctx.socket(ZMQ.REQ);
        Z.connect(s, args[0]);
        byte[] buf = new byte[size];
        for (int i = Args.warmup(); i > 0; i--) {
            s.send(buf, 0, size, 0);
            s.recv(buf, 0, size, 0);
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            if (!s.send(buf, 0, size, 0)) throw new IllegalStateException("send failed");
            if (s.recv(buf, 0, size, 0) != size) throw new IllegalStateException("message of wrong size");
        }
        long t1 = System.nanoTime();
        Args.latency(size, count, (t1 - t0) / 1000.0);
        s.close();
        ctx.term();
    }
}
