package guide;

import java.util.ArrayList;
import java.util.List;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Pub-sub envelope subscriber (the guide's psenvsub): subscribes to "B" only. */
public class PsEnvSub {
    public static List<String> run(ZContext context, String endpoint, int n) {
        ZMQ.Socket subscriber = context.createSocket(SocketType.SUB);
        subscriber.connect(endpoint);
        subscriber.subscribe("B".getBytes(ZMQ.CHARSET));
        List<String> got = new ArrayList<>();
        while (got.size() < n) {
            String address = subscriber.recvStr();
            String contents = subscriber.recvStr();
            got.add(address + " : " + contents);
        }
        return got;
    }
}
