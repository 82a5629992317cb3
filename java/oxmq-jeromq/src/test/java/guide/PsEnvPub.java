package guide;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Pub-sub envelope publisher (the guide's psenvpub): two topics, the key in its own frame. */
public class PsEnvPub {
    /** Publishes until the thread is interrupted. */
    public static void run(ZContext context, String endpoint, java.util.function.Consumer<String> bound) {
        ZMQ.Socket publisher = context.createSocket(SocketType.PUB);
        publisher.bind(endpoint);
        bound.accept(publisher.getLastEndpoint());
        while (!Thread.currentThread().isInterrupted()) {
            publisher.sendMore("A");
            publisher.send("We don't want to see this");
            publisher.sendMore("B");
            publisher.send("We would like to see this");
            Thread.yield();
        }
    }
}
