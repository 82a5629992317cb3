package guide;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQ.Poller;
import org.zeromq.ZMQ.Socket;

/** Request-reply broker (the guide's rrbroker): ROUTER front, DEALER back, a poller between. */
public class RrBroker {
    /** Runs until the thread is interrupted or the context is closed. */
    public static void run(ZContext context, Socket frontend, Socket backend) {
        Poller items = context.createPoller(2);
        items.register(frontend, Poller.POLLIN);
        items.register(backend, Poller.POLLIN);
        boolean more = false;
        byte[] message;
        while (!Thread.currentThread().isInterrupted()) {
            if (items.poll() < 0) break;
            if (items.pollin(0)) {
                while (true) {
                    message = frontend.recv(0);
                    more = frontend.hasReceiveMore();
                    backend.send(message, more ? ZMQ.SNDMORE : 0);
                    if (!more) break;
                }
            }
            if (items.pollin(1)) {
                while (true) {
                    message = backend.recv(0);
                    more = backend.hasReceiveMore();
                    frontend.send(message, more ? ZMQ.SNDMORE : 0);
                    if (!more) break;
                }
            }
        }
        items.close();
    }

    /** The guide's rrworker: a REP answering "World". */
    public static void worker(ZContext context, String endpoint, int n) {
        Socket responder = context.createSocket(SocketType.REP);
        responder.connect(endpoint);
        for (int i = 0; i < n && !Thread.currentThread().isInterrupted(); i++) {
            String string = responder.recvStr(0);
            if (string == null) break;
            responder.send("World for " + string);
        }
    }
}
