package guide;

import java.util.ArrayList;
import java.util.List;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Hello World client (the guide's hwclient): REQ, sends n requests, collects the replies. */
public class HwClient {
    public static List<String> run(ZContext context, String endpoint, int n) {
        List<String> replies = new ArrayList<>();
        ZMQ.Socket socket = context.createSocket(SocketType.REQ);
        socket.connect(endpoint);
        for (int requestNbr = 0; requestNbr != n; requestNbr++) {
            String request = "Hello" + requestNbr;
            socket.send(request.getBytes(ZMQ.CHARSET), 0);
            byte[] reply = socket.recv(0);
            replies.add(new String(reply, ZMQ.CHARSET));
        }
        return replies;
    }
}
