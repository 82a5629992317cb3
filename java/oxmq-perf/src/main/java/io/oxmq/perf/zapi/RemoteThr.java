package io.oxmq.perf.zapi;

import io.oxmq.perf.Args;
import org.zeromq.ZMQ;

/** remote_thr on the org.zeromq API: PUSH, sending one array again and again. */
public final class RemoteThr {
    public static void main(String[] args) {
        Args.need(args, 3, "remote_thr <connect-to> <message-size> <message-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "message-count");
        ZMQ.Context ctx = ZMQ.context(1);
        ZMQ.Socket s = ctx.socket(ZMQ.PUSH);
        Z.connect(s, args[0]);
        byte[] buf = new byte[size];
        for (long i = -(long) Args.warmup(); i < count; i++) {
            if (!s.send(buf, 0, size, 0)) throw new IllegalStateException("send failed");
        }
        s.close();
        ctx.term();
    }
}
