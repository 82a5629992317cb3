package guide;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.zeromq.SocketType;
import org.zeromq.ZAuth;
import org.zeromq.ZCert;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** The guide's ironhouse pattern: a CURVE server whose clients are checked by ZAuth against a
 *  directory of allowed public certificates, with an IP allow list. */
public class CurveServer {
    /** Sends one message to one authenticated client; returns what the client received, or
     *  null when the client's key is not allowed (it then gets nothing within the timeout). */
    public static String run(ZContext ctx, Path certDir, boolean clientAllowed) throws IOException {
        ZAuth auth = new ZAuth(ctx);
        auth.setVerbose(false);
        auth.allow("127.0.0.1");
        ZCert clientCert = new ZCert();
        if (clientAllowed) clientCert.savePublic(certDir.resolve("client.pub").toString());
        Files.writeString(certDir.resolve("unrelated.txt"), "not a certificate\n");
        auth.configureCurve(certDir.toString());
        ZCert serverCert = new ZCert();

        ZMQ.Socket server = ctx.createSocket(SocketType.PUSH);
        serverCert.apply(server);
        server.setCurveServer(true);
        server.setZAPDomain("global");
        server.bind("tcp://127.0.0.1:*");
        String endpoint = server.getLastEndpoint();

        ZMQ.Socket client = ctx.createSocket(SocketType.PULL);
        clientCert.apply(client);
        client.setCurveServerKey(serverCert.getPublicKey());
        client.setReceiveTimeOut(1500);
        client.connect(endpoint);

        server.setSendTimeOut(1500);
        server.send("Secret message");
        String got = client.recvStr();
        auth.close();
        return got;
    }
}
