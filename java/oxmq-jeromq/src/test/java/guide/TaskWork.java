package guide;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Task worker (the guide's taskwork): pulls tasks, pushes results (no sleeping here). */
public class TaskWork {
    public static void run(ZContext context, String ventilator, String sinkEndpoint) {
        ZMQ.Socket receiver = context.createSocket(SocketType.PULL);
        receiver.connect(ventilator);
        ZMQ.Socket sender = context.createSocket(SocketType.PUSH);
        sender.connect(sinkEndpoint);
        while (!Thread.currentThread().isInterrupted()) {
            String string = receiver.recvStr(0);
            if (string == null) break; // interrupted
            sender.send("done " + string, 0);
        }
    }
}
