package guide;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

import org.zeromq.SocketType;
import org.zeromq.ZAuth;
import org.zeromq.ZCert;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A request-reply peer with PLAIN or CURVE security, written against JeroMQ's API only so the
 * same source runs on oxmq (in the test JVM) and on JeroMQ (in a peer JVM, through {@link Run}).
 *
 * <p>Arguments are {@code key=value}: {@code mode} bind|connect, {@code endpoint},
 * {@code role} server (REP echoing "echo:" + request, authenticating with ZAuth) | client (REQ
 * sending n requests and checking each reply), {@code mech} null|plain|curve, {@code n},
 * {@code timeout} (ms for each receive), {@code user}/{@code password} (PLAIN; the server
 * accepts admin/secret), {@code spub}/{@code ssec} (server key pair, Z85), {@code cpub}/{@code csec}
 * (client key pair), {@code allow} (CURVE server: a directory of allowed public certificates,
 * default any key), {@code handshake} (ms: ZMQ_HANDSHAKE_IVL, optional). The result is "OK" after n round trips, "TIMEOUT" when a receive times out.
 */
public class SecurePeer {
    public static String run(ZContext ctx, Map<String, String> a, Consumer<String> ready) throws IOException {
        boolean server = a.get("role").equals("server");
        String mech = a.get("mech");
        int n = Integer.parseInt(a.get("n"));
        ZAuth auth = null;
        ZMQ.Socket socket = ctx.createSocket(server ? SocketType.REP : SocketType.REQ);
        socket.setLinger(0);
        socket.setReceiveTimeOut(Integer.parseInt(a.get("timeout")));
        socket.setSendTimeOut(Integer.parseInt(a.get("timeout")));
        if (a.containsKey("handshake")) socket.setHandshakeIvl(Integer.parseInt(a.get("handshake")));
        if (server && !mech.equals("null")) {
            auth = new ZAuth(ctx);
            auth.allow("127.0.0.1");
            socket.setZAPDomain("global");
        }
        if (mech.equals("plain")) {
            if (server) {
                Path passwords = Files.createTempFile("passwords", ".txt");
                Files.writeString(passwords, "admin=secret\n");
                auth.configurePlain("*", passwords.toString());
                socket.setPlainServer(true);
            } else {
                socket.setPlainUsername(a.get("user"));
                socket.setPlainPassword(a.get("password"));
            }
        } else if (mech.equals("curve")) {
            if (server) {
                auth.configureCurve(a.getOrDefault("allow", ZAuth.CURVE_ALLOW_ANY));
                new ZCert(a.get("spub"), a.get("ssec")).apply(socket);
                socket.setCurveServer(true);
            } else {
                new ZCert(a.get("cpub"), a.get("csec")).apply(socket);
                socket.setCurveServerKey(ZMQ.Curve.z85Decode(a.get("spub")));
            }
        }
        if (a.get("mode").equals("bind")) {
            socket.bind(a.get("endpoint"));
            ready.accept(socket.getLastEndpoint());
        } else {
            socket.connect(a.get("endpoint"));
            ready.accept(a.get("endpoint"));
        }
        String result = "OK";
        for (int i = 0; i < n && result.equals("OK"); i++) {
            if (server) {
                String request = socket.recvStr();
                if (request == null) result = "TIMEOUT";
                else socket.send("echo:" + request);
            } else {
                String request = "request " + i + " over " + mech;
                if (!socket.send(request)) {
                    result = "TIMEOUT"; // no connection completed its handshake within the timeout
                    break;
                }
                String reply = socket.recvStr();
                if (reply == null) result = "TIMEOUT";
                else if (!reply.equals("echo:" + request)) result = "BAD REPLY " + reply;
            }
        }
        ctx.destroySocket(socket);
        if (auth != null) auth.close();
        return result;
    }

    /** Parses {@code key=value} arguments. */
    public static Map<String, String> parse(String[] args, int from) {
        Map<String, String> m = new HashMap<>();
        for (int i = from; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            m.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        return m;
    }
}
