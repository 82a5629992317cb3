import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.zeromq.ZMQ;

/**
 * Interop peer for oxmq-netty's tests on JeroMQ's classic API (compiled separately against
 * JeroMQ 0.3.6 and 0.6.0). Same scenarios and output as zmq_peer.py:
 * {@code JeromqPeer SCENARIO bind|connect:PORT}.
 */
public class JeromqPeer {
  static List<byte[]> recv(ZMQ.Socket s) {
    List<byte[]> m = new ArrayList<>();
    do {
      byte[] f = s.recv(0);
      if (f == null) {
        System.err.println("receive timed out");
        System.exit(2);
      }
      m.add(f);
    } while (s.hasReceiveMore());
    return m;
  }

  static void send(ZMQ.Socket s, List<byte[]> m) {
    for (int i = 0; i < m.size(); i++) {
      s.send(m.get(i), i < m.size() - 1 ? ZMQ.SNDMORE : 0);
    }
  }

  static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String str(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  /**
   * JeroMQ 0.6.0's connecting socket now and then never sends its greeting on a connected
   * stream (about 1 connection in 300 with both cores busy, against libzmq as well), and does
   * not notice when the listener closes it. Its own handshake timer does notice and it then
   * reconnects, so a short interval turns the stall into a retry. JeroMQ 0.3.x has no such
   * option (nor the stall), hence the lookup.
   */
  static void retryStalledHandshakes(ZMQ.Socket s) throws Exception {
    try {
      ZMQ.Socket.class.getMethod("setHandshakeIvl", int.class).invoke(s, 2000);
    } catch (NoSuchMethodException e) {
      // JeroMQ 0.3.x
    }
  }

  public static void main(String[] args) throws Exception {
    String scenario = args[0];
    String where = args[1];
    ZMQ.Context ctx = ZMQ.context(1);
    int type = scenario.equals("router") ? ZMQ.ROUTER : scenario.equals("dealer") ? ZMQ.DEALER
        : scenario.equals("pub") ? ZMQ.PUB : ZMQ.SUB;
    ZMQ.Socket s = ctx.socket(type);
    s.setLinger(5000);
    s.setReceiveTimeOut(10000);
    if (scenario.equals("dealer")) {
      s.setIdentity(b("peer-dealer"));
    }
    if (scenario.equals("sub")) {
      s.subscribe(b("A"));
    }
    if (where.equals("bind")) {
      // JeroMQ 0.3.x has no port 0 / wildcard: bindToRandomPort retries until a free port binds
      int port = s.bindToRandomPort("tcp://127.0.0.1");
      System.out.println("PORT " + port);
      System.out.flush();
    } else {
      retryStalledHandshakes(s);
      s.connect("tcp://127.0.0.1:" + where.substring("connect:".length()));
    }
    switch (scenario) {
      case "router": {
        List<byte[]> m = recv(s);
        List<byte[]> r = new ArrayList<>();
        r.add(m.get(0));
        r.add(b("echo"));
        r.add(m.get(0));
        r.addAll(m.subList(1, m.size()));
        send(s, r);
        System.out.println("OK " + str(m.get(0)));
        break;
      }
      case "dealer": {
        send(s, List.of(b("ping"), b("x")));
        List<byte[]> r = recv(s);
        if (r.size() != 2 || !str(r.get(0)).equals("pong") || !str(r.get(1)).equals("peer-dealer")) {
          System.err.println("unexpected reply of " + r.size() + " frames");
          System.exit(3);
        }
        System.out.println("OK");
        break;
      }
      case "sub": {
        List<byte[]> m = recv(s);
        if (m.size() != 2 || !str(m.get(0)).equals("A-data") || !str(m.get(1)).equals("part2")) {
          System.err.println("unexpected first message " + str(m.get(0)));
          System.exit(3);
        }
        System.out.println("OK");
        break;
      }
      default: {
        long deadline = System.nanoTime() + 15_000_000_000L;
        while (System.nanoTime() < deadline) {
          send(s, List.of(b("B-skip"), b("part2")));
          send(s, List.of(b("A-data"), b("part2")));
          Thread.sleep(20);
        }
      }
    }
    System.out.flush();
    s.close();
    ctx.term();
  }
}
