package guide;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.nio.channels.SelectableChannel;
import java.util.ArrayList;
import java.util.List;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZFrame;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;
import org.zeromq.ZPoller;

/**
 * JeroMQ API beyond the guide's examples, written against JeroMQ only: ZPoller with handlers,
 * ZMsg's fluent methods and its save/load, socket option getters, ZContext defaults and
 * ZMQ_HELLO_MSG. Each method returns lines of text; {@link Run} prints them ("tour"), so the
 * same source can run on JeroMQ in another JVM and on oxmq here, and the outputs be compared.
 */
public class ApiTour {
    /** Two PULL sockets fed over tcp, served by one ZPoller: one with its own handler (a
     *  function), one through the global handler; the handlers see every message once. */
    public static List<String> poller(ZContext ctx, int n) {
        List<String> got = new ArrayList<>();
        ZMQ.Socket a = ctx.createSocket(SocketType.PULL);
        ZMQ.Socket b = ctx.createSocket(SocketType.PULL);
        a.bind("tcp://127.0.0.1:*");
        b.bind("tcp://127.0.0.1:*");
        ZMQ.Socket pa = ctx.createSocket(SocketType.PUSH);
        ZMQ.Socket pb = ctx.createSocket(SocketType.PUSH);
        pa.connect(a.getLastEndpoint());
        pb.connect(b.getLastEndpoint());
        try (ZPoller poller = new ZPoller(ctx)) {
            poller.register(a, (socket, events) -> {
                got.add("a:" + socket.recvStr() + ":" + ((events & ZPoller.IN) != 0));
                return true;
            }, ZPoller.IN);
            poller.setGlobalHandler(new ZPoller.EventsHandler() {
                @Override
                public boolean events(ZMQ.Socket socket, int events) {
                    got.add("b:" + socket.recvStr());
                    return true;
                }

                @Override
                public boolean events(SelectableChannel channel, int events) {
                    return false;
                }
            });
            poller.register(b, ZPoller.POLLIN);
            for (int i = 0; i < n; i++) {
                pa.send("x" + i);
                pb.send("y" + i);
            }
            int seen = 0;
            while (seen < 2 * n) {
                int before = got.size();
                if (poller.poll(10_000) < 0) throw new IllegalStateException("poll failed");
                if (got.size() == before) throw new IllegalStateException("no handler ran within 10 s");
                seen = got.size();
            }
            // a handler that says false makes poll return -1
            poller.unregister(b);
            poller.register(b, (socket, events) -> {
                socket.recvStr();
                return false;
            }, ZPoller.IN);
            pb.send("stop");
            int rc = 0;
            for (int i = 0; i < 100 && rc == 0; i++) rc = poller.poll(100);
            got.add("false handler: " + rc);
            got.add("registered: " + poller.registered());
        }
        List<String> sorted = new ArrayList<>(got);
        sorted.sort(null);
        return sorted;
    }

    /** ZMsg's fluent building, wrapping, saving and loading, equality and dump. */
    public static List<String> message() throws Exception {
        List<String> out = new ArrayList<>();
        ZMsg m = new ZMsg().addString("body").addLast("tail".getBytes(ZMQ.CHARSET)).push("head")
                .addFirst("first");
        m.wrap(new ZFrame("address"));
        out.add("frames " + m.size() + " " + m.contentSize());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        out.add("saved " + ZMsg.save(m, new DataOutputStream(bytes)) + " " + bytes.size());
        ZMsg back = ZMsg.load(new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        out.add("equal after load " + m.equals(back) + " " + (m.hashCode() == back.hashCode()));
        out.add("unwrap " + back.unwrap().getString(ZMQ.CHARSET) + ", then " + back.popString());
        out.add("equal after unwrap " + m.equals(back));
        ZMsg joined = new ZMsg().append(new ZMsg().addString("p").addString("q")).addString("r");
        out.add("joined " + joined.size() + " " + joined.peekLast().getString(ZMQ.CHARSET));
        StringBuilder dump = new StringBuilder();
        joined.dump(dump);
        out.add("dump mentions q " + dump.toString().contains("q"));
        out.add("truncated load " + (ZMsg.load(new DataInputStream(new ByteArrayInputStream(new byte[] {0, 0, 0, 2, 0, 0, 0, 9, 1}))) == null));
        return out;
    }

    /** Options set and read back, JeroMQ's way. */
    public static List<String> options(ZContext ctx) {
        List<String> out = new ArrayList<>();
        ZMQ.Socket s = ctx.createSocket(SocketType.REQ);
        s.setTCPKeepAlive(1);
        s.setTCPKeepAliveIdle(30);
        s.setTCPKeepAliveCount(4);
        s.setTCPKeepAliveInterval(5);
        s.setBacklog(42);
        s.setImmediate(true);
        s.setReqRelaxed(true);
        s.setReqCorrelate(true);
        s.setHandshakeIvl(12_000);
        s.setHeartbeatIvl(500);
        s.setHeartbeatTtl(2_000);
        s.setHeartbeatTimeout(1_500);
        s.setReconnectIVL(150L);
        s.setReconnectIVLMax(3_000L);
        s.setTos(0x10);
        s.setIPv6(true);
        s.setSendBufferSize(65_536L);
        s.setPlainUsername("admin");
        s.setPlainPassword("secret");
        out.add("keepalive " + s.getTCPKeepAlive() + " " + s.getTCPKeepAliveIdle() + " "
                + s.getTCPKeepAliveCount() + " " + s.getTCPKeepAliveInterval());
        out.add("backlog " + s.getBacklog());
        out.add("immediate " + s.getImmediate() + " delay " + s.getDelayAttachOnConnect());
        try {
            out.add("req relaxed " + s.getReqRelaxed());
        } catch (UnsupportedOperationException e) {
            out.add("req relaxed is write-only");
        }
        out.add("intervals " + s.getHandshakeIvl() + " " + s.getHeartbeatIvl() + " " + s.getHeartbeatTtl()
                + " " + s.getHeartbeatTimeout() + " " + s.getReconnectIVL() + " " + s.getReconnectIVLMax());
        out.add("tos " + s.getTos() + " ipv6 " + s.getIPv6() + " ipv4only " + s.getIPv4Only());
        out.add("sndbuf " + s.getSendBufferSize());
        out.add("plain " + s.getPlainUsername() + " " + s.getPlainPassword() + " " + s.getMechanism());
        ZMQ.Socket server = ctx.createSocket(SocketType.REP);
        server.setAsServerPlain(true);
        out.add("plain server " + server.isAsServerPlain() + " " + server.getMechanism());
        ZMQ.Socket pull = ctx.createSocket(SocketType.PULL);
        pull.setConflate(true);
        out.add("conflate " + pull.isConflate());
        out.add("nothing yet " + (pull.recv(ZMQ.DONTWAIT) == null) + ", EAGAIN "
                + (pull.errno() == ZMQ.Error.EAGAIN.getCode()));
        return out;
    }

    /** A ROUTER's ZMQ_HELLO_MSG reaches every DEALER that connects, before anything else; the
     *  context's high-water marks reach its new sockets. */
    public static List<String> helloAndDefaults(ZContext ctx) {
        List<String> out = new ArrayList<>();
        ctx.setSndHWM(77);
        ctx.setRcvHWM(88);
        ZMQ.Socket router = ctx.createSocket(SocketType.ROUTER);
        out.add("hwm " + router.getSndHWM() + " " + router.getRcvHWM());
        router.setHelloMsg("hello".getBytes(ZMQ.CHARSET));
        router.bind("tcp://127.0.0.1:*");
        for (int i = 0; i < 2; i++) {
            ZMQ.Socket dealer = ctx.createSocket(SocketType.DEALER);
            dealer.setReceiveTimeOut(10_000);
            dealer.connect(router.getLastEndpoint());
            out.add("dealer " + i + " got " + dealer.recvStr());
            ctx.destroySocket(dealer);
        }
        out.add("shadow shares " + (ctx.shadow().getContext() == ctx.getContext()));
        return out;
    }

    /** Every part, in order. */
    public static List<String> all(ZContext ctx) throws Exception {
        List<String> out = new ArrayList<>();
        out.addAll(poller(ctx, 20));
        out.addAll(message());
        out.addAll(options(ctx));
        out.addAll(helloAndDefaults(ctx));
        return out;
    }
}
