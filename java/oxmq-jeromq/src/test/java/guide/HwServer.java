package guide;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Hello World server (the guide's hwserver): REP, answers "World" to each request. */
public class HwServer {
    /** Binds {@code endpoint}, reports the bound endpoint, serves {@code n} requests. */
    public static void run(ZContext context, String endpoint, int n, java.util.function.Consumer<String> bound) {
        ZMQ.Socket socket = context.createSocket(SocketType.REP);
        socket.bind(endpoint);
        bound.accept(socket.getLastEndpoint());
        for (int i = 0; i < n && !Thread.currentThread().isInterrupted(); i++) {
            byte[] reply = socket.recv(0);
            String request = new String(reply, ZMQ.CHARSET);
            socket.send(("World " + request).getBytes(ZMQ.CHARSET), 0);
        }
    }
}
