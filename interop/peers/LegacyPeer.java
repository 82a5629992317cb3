// A ZeroMQ peer for interop/tests/legacy_peers.rs, written against the org.zeromq.ZMQ API that
// JeroMQ 0.3.6 (Debian's libjeromq-java: ZMTP 2.0) and jzmq 3.1.0 (Debian's libzmq-java: JNI over
// whichever libzmq.so.5 the loader finds) share. The test compiles this one file against each
// jar into its own directory.
//
// Usage: java LegacyPeer SCENARIO ENDPOINT [ID]
//   router-bind EP ID   ROUTER binds EP; expects [ID, "ping", rest...], replies [ID, "pong", rest...]
//   dealer-connect EP ID DEALER with identity ID connects; sends ["ping", "x", "", 300 x 'z'],
//                        expects ["pong", "x", "", 300 x 'z']
//   xpub-bind EP        XPUB binds; expects the subscription "\1news" (prints SUBSCRIBED), then
//                        publishes ["sports", "no"] and ["news", "yes"]
//   sub-connect EP      SUB subscribed to "news" connects; expects ["news", "yes"] first
// Prints "LIB <path of the libzmq.so.5 mapped into this JVM, or ->", then "READY", then "OK" or
// "FAIL <why>"; then waits for stdin to close before it closes its socket, so nothing queued is
// lost while the test still checks the other side.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.zeromq.ZMQ;

public class LegacyPeer {
    static final byte[] Z300 = new byte[300];

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static List<byte[]> recvMsg(ZMQ.Socket sock) {
        List<byte[]> parts = new ArrayList<>();
        do {
            byte[] part = sock.recv(0);
            if (part == null) {
                throw new IllegalStateException("receive timed out");
            }
            parts.add(part);
        } while (sock.hasReceiveMore());
        return parts;
    }

    static void sendMsg(ZMQ.Socket sock, List<byte[]> parts) {
        for (int i = 0; i < parts.size(); i++) {
            if (!sock.send(parts.get(i), i + 1 < parts.size() ? ZMQ.SNDMORE : 0)) {
                throw new IllegalStateException("send failed");
            }
        }
    }

    static void expect(boolean ok, String why) {
        if (!ok) {
            throw new IllegalStateException(why);
        }
    }

    static String mappedLibzmq() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
                int at = line.indexOf('/');
                if (at >= 0 && line.contains("libzmq.so")) {
                    return line.substring(at);
                }
            }
        } catch (Exception e) {
            return "-";
        }
        return "-";
    }

    public static void main(String[] args) throws Exception {
        Arrays.fill(Z300, (byte) 'z');
        String scenario = args[0];
        String ep = args[1];
        String id = args.length > 2 ? args[2] : "";
        ZMQ.Context ctx = ZMQ.context(1);
        int type;
        switch (scenario) {
            case "router-bind": type = ZMQ.ROUTER; break;
            case "dealer-connect": type = ZMQ.DEALER; break;
            case "xpub-bind": type = ZMQ.XPUB; break;
            case "sub-connect": type = ZMQ.SUB; break;
            default: throw new IllegalArgumentException(scenario);
        }
        ZMQ.Socket sock = ctx.socket(type);
        sock.setLinger(5000);
        sock.setReceiveTimeOut(20000);
        System.out.println("LIB " + mappedLibzmq());
        String verdict = "OK";
        try {
            switch (scenario) {
                case "router-bind": {
                    sock.bind(ep);
                    System.out.println("READY");
                    System.out.flush();
                    List<byte[]> m = recvMsg(sock);
                    expect(m.size() >= 2, "short message of " + m.size() + " parts");
                    expect(s(m.get(0)).equals(id), "routing id " + s(m.get(0)) + ", expected " + id);
                    expect(s(m.get(1)).equals("ping"), "got " + s(m.get(1)));
                    m.set(1, b("pong"));
                    sendMsg(sock, m);
                    break;
                }
                case "dealer-connect": {
                    sock.setIdentity(b(id));
                    sock.connect(ep);
                    System.out.println("READY");
                    System.out.flush();
                    sendMsg(sock, Arrays.asList(b("ping"), b("x"), new byte[0], Z300));
                    List<byte[]> m = recvMsg(sock);
                    expect(m.size() == 4, "reply of " + m.size() + " parts");
                    expect(s(m.get(0)).equals("pong") && s(m.get(1)).equals("x") && m.get(2).length == 0
                            && Arrays.equals(m.get(3), Z300), "wrong reply");
                    break;
                }
                case "xpub-bind": {
                    sock.bind(ep);
                    System.out.println("READY");
                    System.out.flush();
                    byte[] sub = sock.recv(0);
                    expect(sub != null, "no subscription");
                    expect(Arrays.equals(sub, b("\u0001news")), "subscription " + Arrays.toString(sub));
                    System.out.println("SUBSCRIBED");
                    System.out.flush();
                    sendMsg(sock, Arrays.asList(b("sports"), b("no")));
                    sendMsg(sock, Arrays.asList(b("news"), b("yes")));
                    break;
                }
                case "sub-connect": {
                    sock.subscribe(b("news"));
                    sock.connect(ep);
                    System.out.println("READY");
                    System.out.flush();
                    List<byte[]> m = recvMsg(sock);
                    expect(m.size() == 2 && s(m.get(0)).equals("news") && s(m.get(1)).equals("yes"),
                            "got " + m.size() + " parts, first " + s(m.get(0)));
                    break;
                }
                default:
                    break;
            }
        } catch (Exception e) {
            verdict = "FAIL " + e;
        }
        System.out.println(verdict);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        while (in.readLine() != null) {
        }
        sock.close();
        ctx.term();
    }
}
