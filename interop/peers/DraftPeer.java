// A JeroMQ 0.6.0 draft-socket peer for oxmq's interop tests (interop/tests/draft.rs).
//
// Usage: java -cp jeromq.jar:DIR DraftPeer SCENARIO bind|connect ENDPOINT [first]
// (`first`: a CHANNEL speaks first instead of echoing.) The same source runs on JeroMQ's
// org.zeromq API and on oxmq's (java/oxmq-jeromq's DraftInteropTest pits the two against each
// other). Prints "READY <endpoint>" once bound or connected, then runs SCENARIO and prints "OK" (exit 0)
// or "FAIL <why>" (exit 1). Lines starting with "RECV " report what a receiving scenario got.
// Every receive has a timeout and the whole process gives up after 60 s.

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;

public class DraftPeer {
    static void fail(String why) {
        System.out.println("FAIL " + why);
        System.out.flush();
        System.exit(1);
    }

    static ZFrame recv(ZMQ.Socket s) {
        ZFrame f = ZFrame.recvFrame(s);
        if (f == null) fail("receive timed out");
        return f;
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try { Thread.sleep(60_000); } catch (InterruptedException e) { return; }
            System.out.println("FAIL watchdog");
            System.out.flush();
            Runtime.getRuntime().halt(2);
        });
        watchdog.setDaemon(true);
        watchdog.start();

        String scenario = args[0];
        boolean bind = args[1].equals("bind");
        String ep = args[2];
        boolean first = args.length > 3 && args[3].equals("first");
        SocketType type = SocketType.valueOf(scenario.toUpperCase());
        try (ZContext ctx = new ZContext()) {
            // What was sent is delivered before the context closes (ZContext's own linger, 0 by
            // default, replaces the socket's at close): a SCATTER's messages, sent just
            // before, to a GATHER that is still connecting. Up to 8 s, inside the receiving
            // side's 10 s timeout: when a connecting JeroMQ's first connection is lost to the
            // race below, the messages wait out its 1 s handshake timer and a reconnect, and
            // under load 2 s was too little for that ("gather got null" after the sender left).
            ctx.setLinger(8000);
            ZMQ.Socket s = ctx.createSocket(type);
            s.setReceiveTimeOut(10_000);
            s.setLinger(1000);
            // A connecting JeroMQ sometimes completes the TCP connect but never sends its
            // greeting (its Poller's connect hand-off race, zeromq/jeromq PR #1022: 1-6% of
            // connections, more under load). Only its own handshake timer, 30 s by default and
            // longer than the tests wait, ends such a connection; then it reconnects.
            s.setHandshakeIvl(1000);
            if (type == SocketType.DISH) s.join("g1");
            int peerId = 0;
            if (bind) {
                if (ep.endsWith(":*")) {
                    int port = s.bindToRandomPort(ep.substring(0, ep.length() - 2));
                    ep = ep.substring(0, ep.length() - 1) + port;
                } else if (!s.bind(ep)) fail("bind " + ep);
            } else if (type == SocketType.PEER) {
                peerId = s.connectPeer(ep);
                if (peerId == 0) fail("connectPeer");
            } else if (!s.connect(ep)) fail("connect " + ep);
            System.out.println("READY " + ep);
            System.out.flush();

            switch (type) {
                case SERVER: {
                    // Echo 10 requests to whichever client sent each, by routing id.
                    for (int i = 0; i < 10; i++) {
                        ZFrame f = recv(s);
                        int id = f.getRoutingId();
                        if (id == 0) fail("no routing id");
                        ZFrame r = new ZFrame("echo:" + f.getString(ZMQ.CHARSET));
                        r.setRoutingId(id);
                        if (!r.send(s, 0)) fail("server send");
                    }
                    break;
                }
                case CLIENT: {
                    for (int i = 0; i < 10; i++) {
                        if (!s.send("c" + i)) fail("client send");
                        String got = s.recvStr();
                        if (!("echo:c" + i).equals(got)) fail("client got " + got);
                    }
                    break;
                }
                case DISH: {
                    // Report every message until "end" (in g1).
                    while (true) {
                        ZFrame f = recv(s);
                        String body = f.getString(ZMQ.CHARSET);
                        System.out.println("RECV " + f.getGroup() + " " + body);
                        System.out.flush();
                        if (body.equals("end")) break;
                    }
                    break;
                }
                case RADIO: {
                    // g1 and g2 in turn until stdin closes (the oxmq dish joined only g1).
                    java.io.InputStream in = System.in;
                    int i = 0;
                    while (in.available() == 0 && i < 4000) {
                        ZFrame a = new ZFrame("tick" + i);
                        a.setGroup("g1");
                        a.send(s, 0);
                        ZFrame b = new ZFrame("other" + i);
                        b.setGroup("g2");
                        b.send(s, 0);
                        i++;
                        Thread.sleep(5);
                    }
                    break;
                }
                case SCATTER: {
                    for (int i = 0; i < 10; i++) {
                        if (!s.send("s" + i)) fail("scatter send");
                    }
                    break;
                }
                case GATHER: {
                    for (int i = 0; i < 10; i++) {
                        String got = s.recvStr();
                        if (!("s" + i).equals(got)) fail("gather got " + got);
                    }
                    break;
                }
                case CHANNEL: {
                    for (int i = 0; i < 10 && first; i++) {
                        if (!s.send("x" + i)) fail("channel send");
                        String got = s.recvStr();
                        if (!("echo:x" + i).equals(got)) fail("channel got " + got);
                    }
                    for (int i = 0; i < 10 && !first; i++) {
                        String got = s.recvStr();
                        if (got == null) fail("channel timeout");
                        if (!s.send("echo:" + got)) fail("channel send");
                    }
                    break;
                }
                case PEER: {
                    if (bind) {
                        // Echo 3 messages back to their sender's routing id.
                        for (int i = 0; i < 3; i++) {
                            ZFrame f = recv(s);
                            ZFrame r = new ZFrame("echo:" + f.getString(ZMQ.CHARSET));
                            r.setRoutingId(f.getRoutingId());
                            if (!r.send(s, 0)) fail("peer send");
                        }
                    } else {
                        // Speak first, through the id connectPeer returned.
                        for (int i = 0; i < 3; i++) {
                            ZFrame f = new ZFrame("p" + i);
                            f.setRoutingId(peerId);
                            if (!f.send(s, 0)) fail("peer send");
                            ZFrame r = recv(s);
                            String got = r.getString(ZMQ.CHARSET);
                            if (!("echo:p" + i).equals(got)) fail("peer got " + got);
                            if (r.getRoutingId() != peerId) fail("reply from id " + r.getRoutingId());
                        }
                    }
                    break;
                }
                default:
                    fail("unknown scenario " + scenario);
            }
            System.out.println("OK");
            System.out.flush();
        }
        System.exit(0);
    }
}
