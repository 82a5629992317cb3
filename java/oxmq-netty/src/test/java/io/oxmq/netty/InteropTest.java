package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The codec against real peers over TCP loopback, in both connect/bind directions: libzmq 4.3
 * (pyzmq) and oxmq (its Python package) on ZMTP 3.1, JeroMQ 0.6.0 (ZMTP 3.0) and 0.3.6 (ZMTP 2.0)
 * in child JVMs, and netty4-zmtp 0.4.0 (ZMTP 1.0 and 2.0, netty 4.0 in its own JVM).
 *
 * <p>Scenarios (peer side / our side): {@code router} / DEALER with identity (multipart, routing
 * ids), {@code dealer} / ROUTER (the peer's identity reaches us), {@code sub} / PUB (the peer's
 * subscription reaches us; it receives the matching message first), {@code pub} / SUB (our
 * subscription filters what the peer sends).
 */
class InteropTest {
  private static final long WAIT_S = 20;
  private static NioEventLoopGroup group;
  private static Path peerClasses;

  @BeforeAll
  static void setUp() throws IOException {
    group = new NioEventLoopGroup(1);
    Path target = Paths.get(System.getProperty("oxmq.peers.dir", "target/peers")).getParent();
    peerClasses = target.resolve("peer-classes");
    compile("jeromq-0.3.6", "JeromqPeer.java", peerJar("jeromq-0.3.6.jar"));
    compile("jeromq-0.6.0", "JeromqPeer.java", peerJar("jeromq-0.6.0.jar"));
    compile("netty4-zmtp", "Netty4ZmtpPeer.java", peerJar("netty-all-4.0.jar") + File.pathSeparator
        + peerJar("netty4-zmtp.jar"));
  }

  @AfterAll
  static void tearDown() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  static String peerJar(String name) {
    Path p = Paths.get(System.getProperty("oxmq.peers.dir", "target/peers")).resolve(name);
    assertTrue(Files.isRegularFile(p), "missing peer jar " + p + " (mvn generate-test-resources)");
    return p.toString();
  }

  static Path peerSource(String name) {
    return Paths.get(System.getProperty("oxmq.peer.sources", "src/test/peers")).resolve(name);
  }

  static void compile(String outName, String source, String classpath) throws IOException {
    Path out = peerClasses.resolve(outName);
    Files.createDirectories(out);
    String javac = Paths.get(javaExe()).resolveSibling("javac").toString();
    Process p = new ProcessBuilder(javac, "-nowarn", "-d", out.toString(), "-cp", classpath,
        peerSource(source).toString()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "javac " + source + " timed out");
    } catch (InterruptedException e) {
      throw new IOException(e);
    }
    assertEquals(0, p.exitValue(), "javac " + source + " against " + classpath + ":\n" + output);
  }

  // ------------------------------------------------------------------ peers

  /** A peer program: its command line for a scenario and its place ("bind" or "connect:PORT"). */
  interface Peer {
    List<String> command(String scenario, String where);
  }

  static String javaExe() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  static Peer python(String python, String module) {
    return (sc, where) -> List.of(python, peerSource("zmq_peer.py").toString(), module, sc, where);
  }

  static Peer jeromq(String version) {
    return (sc, where) -> List.of(javaExe(), "-cp", peerJar("jeromq-" + version + ".jar")
        + File.pathSeparator + peerClasses.resolve("jeromq-" + version), "JeromqPeer", sc, where);
  }

  static Peer netty4zmtp(String protocol) {
    return (sc, where) -> List.of(javaExe(), "-cp", peerJar("netty-all-4.0.jar")
        + File.pathSeparator + peerJar("netty4-zmtp.jar") + File.pathSeparator
        + peerClasses.resolve("netty4-zmtp"), "Netty4ZmtpPeer", sc, protocol, where);
  }

  /** A running peer process; its stdout lines are queued. */
  static final class PeerProcess implements AutoCloseable {
    final Process process;
    final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final Path log;

    PeerProcess(List<String> cmd, String name) throws IOException {
      log = peerClasses.getParent().resolve("peer-logs").resolve(name + ".log");
      Files.createDirectories(log.getParent());
      process = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
      Thread t = new Thread(() -> {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String l; (l = r.readLine()) != null; ) {
            lines.add(l);
          }
        } catch (IOException ignored) {
          // the process went away
        }
      });
      t.setDaemon(true);
      t.start();
    }

    String expectLine(String prefix) throws Exception {
      for (;;) {
        String l = lines.poll(WAIT_S, TimeUnit.SECONDS);
        if (l == null) {
          throw new AssertionError("peer printed no \"" + prefix + "\" within " + WAIT_S
              + " s; stderr: " + stderr());
        }
        if (l.startsWith(prefix)) {
          return l;
        }
      }
    }

    String stderr() throws IOException {
      return Files.exists(log) ? Files.readString(log) : "";
    }

    void expectExit0() throws Exception {
      assertTrue(process.waitFor(WAIT_S, TimeUnit.SECONDS), "peer did not exit");
      assertEquals(0, process.exitValue(), "peer failed: " + stderr());
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }

  // ------------------------------------------------------------------ our side

  /** Keeps the first bytes received, for failure messages. */
  static final class Wiretap extends io.netty.channel.ChannelInboundHandlerAdapter {
    final StringBuilder seen = new StringBuilder();
    /** PONG command names seen in the input (in a read, not across two). */
    final java.util.concurrent.atomic.AtomicInteger pongs = new java.util.concurrent.atomic.AtomicInteger();

    @Override
    public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
      io.netty.buffer.ByteBuf b = (io.netty.buffer.ByteBuf) msg;
      for (int i = b.readerIndex(); i + 5 <= b.writerIndex(); i++) {
        if (b.getByte(i) == 4 && b.getByte(i + 1) == 'P' && b.getByte(i + 2) == 'O'
            && b.getByte(i + 3) == 'N' && b.getByte(i + 4) == 'G') {
          pongs.incrementAndGet();
        }
      }
      synchronized (seen) {
        if (seen.length() < 400) {
          seen.append(io.netty.buffer.ByteBufUtil.hexDump(b, b.readerIndex(),
              Math.min(b.readableBytes(), 100))).append(' ');
        }
      }
      ctx.fireChannelRead(msg);
    }

    @Override
    public String toString() {
      synchronized (seen) {
        return seen.toString();
      }
    }
  }

  static final class Conn {
    final Channel ch;
    final Recorder rec;

    Conn(Channel ch, Recorder rec) {
      this.ch = ch;
      this.rec = rec;
    }
  }

  static Conn connect(int port, Supplier<ZmtpCodec> codec) throws Exception {
    Recorder rec = new Recorder();
    Channel ch = new Bootstrap().group(group).channel(NioSocketChannel.class)
        .handler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel c) {
            c.pipeline().addLast(new Wiretap(), codec.get(), rec);
          }
        }).connect(new InetSocketAddress("127.0.0.1", port)).sync().channel();
    return new Conn(ch, rec);
  }

  static final class Server implements AutoCloseable {
    final Channel listener;
    final CompletableFuture<Conn> first = new CompletableFuture<>();
    final CompletableFuture<Throwable> firstError = new CompletableFuture<>();

    Server(Supplier<ZmtpCodec> codec) throws Exception {
      listener = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel c) {
              Recorder rec = new Recorder();
              c.pipeline().addLast(new Wiretap(), codec.get(), rec);
              // The first connection that completes a handshake: on a shared machine, a stray
              // connection (another program reconnecting to a port it used before) may be
              // accepted first and never speak.
              rec.handshake.thenRun(() -> first.complete(new Conn(c, rec)));
              rec.error.thenAccept(firstError::complete);
            }
          }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    }

    int port() {
      return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    @Override
    public void close() {
      listener.close();
    }
  }

  // ------------------------------------------------------------------ scenarios

  static final ZmtpPlainAuthenticator ADMIN = (u, p) -> u.equals("admin") && p.equals("secret");

  static ZmtpCodec ourCodec(String scenario) {
    switch (scenario) {
      case "plain-router":
        return ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).identity("netty-dealer")
            .plainClient("admin", "secret").build();
      case "plain-refuses":
        return ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).plainClient("admin", "guess")
            .build();
      case "plain-dealer":
      case "plain-refused":
        return ZmtpCodec.builder().socketType(ZmtpSocketType.ROUTER).plainServer(ADMIN).build();
      case "heartbeat":
        return ZmtpCodec.builder().socketType(ZmtpSocketType.ROUTER)
            .heartbeatInterval(Duration.ofMillis(100)).heartbeatTimeout(Duration.ofMillis(300))
            .heartbeatTtl(Duration.ofMillis(500)).build();
      case "router":
        return ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).identity("netty-dealer").build();
      case "dealer":
      case "echo":
        return ZmtpCodec.of(ZmtpSocketType.ROUTER);
      case "sub":
        return ZmtpCodec.of(ZmtpSocketType.PUB);
      case "pub":
        return ZmtpCodec.of(ZmtpSocketType.SUB);
      default:
        throw new IllegalArgumentException(scenario);
    }
  }

  static <T> T poll(Recorder rec, Class<T> type) throws Exception {
    Object o = rec.reads.poll(WAIT_S, TimeUnit.SECONDS);
    if (o == null && rec.error.isDone()) {
      throw new AssertionError("codec failed", rec.error.getNow(null));
    }
    assertNotNull(o, () -> "nothing received within " + WAIT_S + " s; handshake "
        + rec.handshake.getNow(null) + "; bytes in: " + rec.wiretap);
    return type.cast(o);
  }

  static List<String> strings(ZmtpMessage m) {
    List<String> l = new ArrayList<>();
    for (int i = 0; i < m.size(); i++) {
      l.add(m.frameAsString(i));
    }
    m.release();
    return l;
  }

  static void run(Peer peer, String name, String scenario, boolean peerBinds,
      ZmtpProtocol expect) throws Exception {
    String logName = name + "-" + scenario + (peerBinds ? "-bind" : "-connect");
    Conn conn;
    PeerProcess p;
    Server server = null;
    if (peerBinds) {
      p = new PeerProcess(peer.command(scenario, "bind"), logName);
      int port = Integer.parseInt(p.expectLine("PORT ").substring(5).trim());
      conn = connect(port, () -> ourCodec(scenario));
    } else {
      server = new Server(() -> ourCodec(scenario));
      p = new PeerProcess(peer.command(scenario, "connect:" + server.port()), logName);
      conn = server.first.get(WAIT_S, TimeUnit.SECONDS);
    }
    try (PeerProcess pp = p; Server s = server) {
      Recorder rec = conn.rec;
      rec.wiretap = conn.ch.pipeline().get(Wiretap.class);
      switch (scenario) {
        case "router":
        case "plain-router":
          conn.ch.writeAndFlush(ZmtpMessage.fromUtf8("hello", "world"));
          assertEquals(List.of("echo", "netty-dealer", "hello", "world"),
              strings(poll(rec, ZmtpMessage.class)));
          pp.expectLine("OK netty-dealer");
          break;
        case "dealer":
        case "plain-dealer": {
          assertEquals(List.of("ping", "x"), strings(poll(rec, ZmtpMessage.class)));
          byte[] id = rec.handshake.get(WAIT_S, TimeUnit.SECONDS).peerIdentity();
          assertEquals("peer-dealer", new String(id, StandardCharsets.UTF_8));
          conn.ch.writeAndFlush(ZmtpMessage.wrap(io.netty.buffer.Unpooled.copiedBuffer("pong",
              StandardCharsets.UTF_8), io.netty.buffer.Unpooled.wrappedBuffer(id)));
          pp.expectLine("OK");
          break;
        }
        case "heartbeat": {
          // the peer's two messages, 1.5 s apart: heartbeats both ways keep the connection
          for (String last : new String[] {"x", "y"}) {
            assertEquals(List.of("ping", last), strings(poll(rec, ZmtpMessage.class)));
          }
          assertTrue(conn.ch.pipeline().get(Wiretap.class).pongs.get() >= 5,
              "the peer answered our PINGs: " + conn.ch.pipeline().get(Wiretap.class).pongs);
          byte[] id = rec.handshake.get(WAIT_S, TimeUnit.SECONDS).peerIdentity();
          conn.ch.writeAndFlush(ZmtpMessage.wrap(io.netty.buffer.Unpooled.copiedBuffer("pong",
              StandardCharsets.UTF_8), io.netty.buffer.Unpooled.wrappedBuffer(id)));
          pp.expectLine("OK");
          break;
        }
        case "echo":
          // each received message written straight back: sent as it arrived (one copy, or by
          // reference for the large one)
          for (int i = 0; i < 3; i++) {
            conn.ch.writeAndFlush(poll(rec, ZmtpMessage.class));
          }
          pp.expectLine("OK");
          break;
        case "sub": {
          ZmtpSubscription sub = poll(rec, ZmtpSubscription.class);
          assertTrue(sub.isSubscribe());
          assertEquals("A", new String(sub.topic(), StandardCharsets.UTF_8));
          // the peer filters: B-skip must not reach its application
          conn.ch.write(ZmtpMessage.fromUtf8("B-skip", "part2"));
          conn.ch.writeAndFlush(ZmtpMessage.fromUtf8("A-data", "part2"));
          pp.expectLine("OK");
          break;
        }
        case "pub":
          conn.ch.writeAndFlush(ZmtpSubscription.subscribe("A"));
          // the peer sends B-skip and A-data alternately: only A-data may arrive
          for (int i = 0; i < 3; i++) {
            assertEquals(List.of("A-data", "part2"), strings(poll(rec, ZmtpMessage.class)));
          }
          break;
        default:
          throw new IllegalArgumentException(scenario);
      }
      ZmtpHandshakeSuccess hs = rec.handshake.get(WAIT_S, TimeUnit.SECONDS);
      assertEquals(expect, hs.protocol(), "negotiated protocol");
      if (expect != ZmtpProtocol.ZMTP10) {
        ZmtpSocketType want = scenario.equals("echo") || scenario.equals("heartbeat")
            ? ZmtpSocketType.DEALER
            : ZmtpSocketType.valueOf(scenario.replace("plain-", "").toUpperCase());
        assertEquals(want, hs.peerSocketType());
      }
      assertEquals(scenario.startsWith("plain-") ? "PLAIN" : "NULL", hs.mechanism());
      assertEquals(scenario.equals("plain-dealer") ? "admin" : "", hs.userId());
      assertTrue(!rec.error.isDone(), () -> "codec error: " + rec.error.getNow(null));
      conn.ch.close().sync();
      if (!scenario.equals("pub")) {
        pp.expectExit0();
      }
    } finally {
      conn.ch.close();
    }
  }

  /**
   * A PLAIN handshake one side refuses: {@code plain-refused}, the peer's wrong password reaches
   * our server; {@code plain-refuses}, ours reaches the peer's server (its ZAP handler says 400).
   * Our codec fails with the expected kind, and the peer receives nothing.
   */
  static void runRefused(Peer peer, String name, String scenario, boolean peerBinds)
      throws Exception {
    String logName = name + "-" + scenario + (peerBinds ? "-bind" : "-connect");
    PeerProcess p;
    Server server = null;
    CompletableFuture<Throwable> error;
    Channel ch = null;
    if (peerBinds) {
      p = new PeerProcess(peer.command(scenario, "bind"), logName);
      int port = Integer.parseInt(p.expectLine("PORT ").substring(5).trim());
      Conn conn = connect(port, () -> ourCodec(scenario));
      ch = conn.ch;
      error = conn.rec.error;
    } else {
      server = new Server(() -> ourCodec(scenario));
      p = new PeerProcess(peer.command(scenario, "connect:" + server.port()), logName);
      error = server.firstError;
    }
    try (PeerProcess pp = p; Server s = server) {
      Throwable t = error.get(WAIT_S, TimeUnit.SECONDS);
      assertInstanceOf(ZmtpException.class, t);
      String want = scenario.equals("plain-refused") ? "AuthenticationFailed" : "PeerError";
      assertEquals(want, ((ZmtpException) t).kind(), t.toString());
      pp.expectLine("OK refused");
      pp.expectExit0();
      if (s != null) {
        assertFalse(s.first.isDone(), "a handshake completed");
      }
    } finally {
      if (ch != null) {
        ch.close();
      }
    }
  }

  static List<DynamicTest> matrix(String name, Peer peer, ZmtpProtocol expect,
      String... scenarios) {
    List<DynamicTest> tests = new ArrayList<>();
    for (String sc : scenarios) {
      for (boolean peerBinds : new boolean[] {true, false}) {
        tests.add(DynamicTest.dynamicTest(name + " " + sc + (peerBinds ? " (peer binds)"
            : " (peer connects)"), () -> {
              if (sc.equals("plain-refused") || sc.equals("plain-refuses")) {
                runRefused(peer, name, sc, peerBinds);
              } else {
                run(peer, name, sc, peerBinds, expect);
              }
            }));
      }
    }
    return tests;
  }

  @TestFactory
  List<DynamicTest> libzmq43ViaPyzmq() {
    return matrix("libzmq", python("python3", "zmq"), ZmtpProtocol.ZMTP31,
        "router", "dealer", "sub", "pub", "echo", "plain-router", "plain-dealer", "plain-refused",
        "plain-refuses", "heartbeat");
  }

  @TestFactory
  List<DynamicTest> oxmqRust() {
    String py = System.getProperty("oxmq.python", "target/oxmq-venv/bin/python");
    assertTrue(Files.isExecutable(Paths.get(py)), "no Python with oxmq at " + py
        + " (scripts/test.d/40-netty.sh builds it: pip install ./python into a venv)");
    return matrix("oxmq", python(py, "oxmq"), ZmtpProtocol.ZMTP31,
        "router", "dealer", "sub", "pub", "echo", "plain-router", "plain-dealer", "plain-refused",
        "plain-refuses", "heartbeat");
  }

  @TestFactory
  List<DynamicTest> jeromq060() {
    return matrix("jeromq-0.6.0", jeromq("0.6.0"), ZmtpProtocol.ZMTP30,
        "router", "dealer", "sub", "pub");
  }

  @TestFactory
  List<DynamicTest> jeromq036() {
    return matrix("jeromq-0.3.6", jeromq("0.3.6"), ZmtpProtocol.ZMTP20,
        "router", "dealer", "sub", "pub");
  }

  @TestFactory
  List<DynamicTest> netty4zmtpZmtp20() {
    return matrix("netty4-zmtp-2.0", netty4zmtp("ZMTP20"), ZmtpProtocol.ZMTP20, "router", "dealer");
  }

  @TestFactory
  List<DynamicTest> netty4zmtpZmtp10() {
    return matrix("netty4-zmtp-1.0", netty4zmtp("ZMTP10"), ZmtpProtocol.ZMTP10, "router", "dealer");
  }
}
