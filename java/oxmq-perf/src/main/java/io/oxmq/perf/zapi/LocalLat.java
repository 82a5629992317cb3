package io.oxmq.perf.zapi;

import io.oxmq.perf.Args;
import org.zeromq.ZMQ;

/** local_lat on the org.zeromq API: REP echoing from one reused array. */
public final class LocalLat {
    public static void main(String[] args) {
        Args.need(args, 3, "local_lat <bind-to> <message-size> <roundtrip-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "roundtrip-count");
        ZMQ.Context ctx = ZMQ.context(1);
        ZMQ.Socket s = ctx.socket(ZMQ.REP);
        Z.bind(s, args[0]);
        byte[] buf = new byte[size];
        for (long i = -(long) Args.warmup(); i < count; i++) {
            if (s.recv(buf, 0, size, 0) != size) throw new IllegalStateException("message of wrong size");
            if (!s.send(buf, 0, size, 0)) throw new IllegalStateException("send failed");
        }
        s.close();
        ctx.term();
    }
}
