package io.oxmq.perf;

import io.oxmq.Context;
import io.oxmq.Frame;
import io.oxmq.Socket;
import io.oxmq.SocketType;

/**
 * {@code remote_thr <connect-to> <message-size> <message-count>}: connects a PUSH socket and
 * sends {@code count} messages, each a fresh library buffer filled in place and handed over
 * without a copy (zmq_msg_init_size + zmq_msg_send, as libzmq's tool does). With a last
 * argument {@code bytes} it sends one array each time instead (the library copies it).
 */
public final class RemoteThr {
    public static void main(String[] args) {
        boolean bytes = Args.bytesMode(args, 3, "remote_thr <connect-to> <message-size> <message-count>");
        int size = Args.count(args[1], "message-size");
        int count = Args.count(args[2], "message-count");
        try (Context ctx = new Context(); Socket s = ctx.socket(SocketType.PUSH); Frame f = new Frame()) {
            s.connect(args[0]);
            byte[] data = new byte[size];
            for (long i = -(long) Args.warmup(); i < count; i++) {
                if (bytes) {
                    s.send(data, 0);
                } else {
                    f.allocate(size);
                    s.send(f, 0);
                }
            }
        }
    }
}
