import com.spotify.netty4.handler.codec.zmtp.ZMTPCodec;
import com.spotify.netty4.handler.codec.zmtp.ZMTPDecoder;
import com.spotify.netty4.handler.codec.zmtp.ZMTPEncoder;
import com.spotify.netty4.handler.codec.zmtp.ZMTPEstimator;
import com.spotify.netty4.handler.codec.zmtp.ZMTPHandshakeSuccess;
import com.spotify.netty4.handler.codec.zmtp.ZMTPMessage;
import com.spotify.netty4.handler.codec.zmtp.ZMTPSession;
import com.spotify.netty4.handler.codec.zmtp.ZMTPSocketType;
import com.spotify.netty4.handler.codec.zmtp.ZMTPWriter;
import com.spotify.netty4.util.BatchFlusher;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.MessageSizeEstimator;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * netty-zmtp's three benchmarks on com.spotify:netty4-zmtp 0.4.0 (netty 4.0, its own JVM), with
 * the same handlers, sizes, batching and measurement as oxmq-netty's OxmqNettyBench:
 * {@code Netty4ZmtpBench throughput|reqrep|custom WARMUP_S MEASURE_S [CONNECTIONS]}; prints
 * {@code RESULT <mode> <ops/s> <avg latency µs>}.
 *
 * <p>Handlers write with the channel's void promise: none of them looks at a write's future, and
 * netty4-zmtp 0.4.0 never completes those futures on netty 4.0.43 and later (its aggregate
 * promise overrides {@code trySuccess()}, which netty's outbound buffer no longer calls), so
 * a promise per write would be work that only one of the two codecs does.
 */
public final class Netty4ZmtpBench {
  static final int CONCURRENCY = 1000;
  // requests in flight per connection: CONCURRENCY spread over the connections
  static int inFlight = CONCURRENCY;
  static final AtomicLong OPS = new AtomicLong();
  static final AtomicLong LATENCY_NS = new AtomicLong();

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    double warmup = Double.parseDouble(args[1]);
    double measure = Double.parseDouble(args[2]);
    int connections = args.length > 3 ? Integer.parseInt(args[3]) : 1;
    if (connections < 1 || CONCURRENCY % connections != 0) {
      throw new IllegalArgumentException("connections: a divisor of " + CONCURRENCY);
    }
    inFlight = CONCURRENCY / connections;
    NioEventLoopGroup boss = new NioEventLoopGroup(1);
    NioEventLoopGroup serverWorkers = new NioEventLoopGroup(1);
    NioEventLoopGroup clientGroup = new NioEventLoopGroup(1);
    final Supplier<ChannelHandler> serverCodec;
    final Supplier<ChannelHandler> clientCodec;
    final Supplier<ChannelHandler> serverHandler;
    final Supplier<ChannelHandler> clientHandler;
    if (mode.equals("throughput")) {
      serverCodec = () -> ZMTPCodec.of(ZMTPSocketType.ROUTER);
      clientCodec = () -> ZMTPCodec.of(ZMTPSocketType.DEALER);
      serverHandler = CountingSink::new;
      clientHandler = Blaster::new;
    } else if (mode.equals("reqrep")) {
      serverCodec = () -> ZMTPCodec.builder().socketType(ZMTPSocketType.ROUTER).build();
      clientCodec = () -> ZMTPCodec.builder().socketType(ZMTPSocketType.DEALER).build();
      serverHandler = Echo::new;
      clientHandler = Requester::new;
    } else if (mode.equals("custom")) {
      serverCodec = () -> ZMTPCodec.builder().socketType(ZMTPSocketType.ROUTER)
          .encoder((ZMTPSession s) -> new ReplyEncoder())
          .decoder((ZMTPSession s) -> new RequestDecoder()).build();
      clientCodec = () -> ZMTPCodec.builder().socketType(ZMTPSocketType.DEALER)
          .encoder((ZMTPSession s) -> new RequestEncoder())
          .decoder((ZMTPSession s) -> new ReplyDecoder()).build();
      serverHandler = CustomServer::new;
      clientHandler = CustomClient::new;
    } else {
      throw new IllegalArgumentException("mode: throughput|reqrep|custom");
    }
    Channel server = new ServerBootstrap().group(boss, serverWorkers)
        .channel(NioServerSocketChannel.class)
        .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
        .childOption(ChannelOption.MESSAGE_SIZE_ESTIMATOR, ByteBufSizeEstimator.INSTANCE)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(serverCodec.get(), serverHandler.get());
          }
        }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
    Bootstrap clients = new Bootstrap().group(clientGroup).channel(NioSocketChannel.class)
        .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
        .option(ChannelOption.MESSAGE_SIZE_ESTIMATOR, ByteBufSizeEstimator.INSTANCE)
        .handler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(clientCodec.get(), clientHandler.get());
          }
        });
    List<Channel> client = new java.util.ArrayList<>();
    for (int i = 0; i < connections; i++) {
      client.add(clients.connect(server.localAddress()).sync().channel());
    }

    Thread.sleep((long) (warmup * 1000));
    long o0 = OPS.get();
    long l0 = LATENCY_NS.get();
    long t0 = System.nanoTime();
    Thread.sleep((long) (measure * 1000));
    long o1 = OPS.get();
    long l1 = LATENCY_NS.get();
    long t1 = System.nanoTime();
    double rate = (o1 - o0) * 1e9 / (t1 - t0);
    double latUs = mode.equals("reqrep") ? (rate > 0 ? CONCURRENCY / rate * 1e6 : 0)
        : (o1 > o0 ? (l1 - l0) / 1000.0 / (o1 - o0) : 0);
    System.out.printf("RESULT %s %.0f %.1f%n", mode, rate, latUs);
    System.out.flush();
    System.exit(0);
  }

  static final class ByteBufSizeEstimator implements MessageSizeEstimator, MessageSizeEstimator.Handle {
    static final ByteBufSizeEstimator INSTANCE = new ByteBufSizeEstimator();

    @Override
    public Handle newHandle() {
      return this;
    }

    @Override
    public int size(Object msg) {
      return msg instanceof ByteBuf ? ((ByteBuf) msg).readableBytes() : 0;
    }
  }

  static final class CountingSink extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      OPS.incrementAndGet();
    }
  }

  static final class Blaster extends ChannelInboundHandlerAdapter {
    private final ZMTPMessage message = ZMTPMessage.fromUTF8(repeat('.', 100));
    private BatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new BatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZMTPHandshakeSuccess) {
        send(ctx);
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      send(ctx);
    }

    private void send(ChannelHandlerContext ctx) {
      while (ctx.channel().isWritable()) {
        for (int i = 0; i < 128; i++) {
          ctx.write(message.retain(), ctx.voidPromise());
        }
        flusher.flush();
      }
    }
  }

  static final class Echo extends ChannelInboundHandlerAdapter {
    private BatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new BatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ctx.write(msg, ctx.voidPromise());
      flusher.flush();
    }
  }

  static final class Requester extends ChannelInboundHandlerAdapter {
    private final ZMTPMessage request = ZMTPMessage.fromUTF8("envelope1", "envelope2", "",
        repeat('d', 20), repeat('d', 40), repeat('d', 100));
    private BatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new BatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZMTPHandshakeSuccess) {
        for (int i = 0; i < inFlight; i++) {
          ctx.write(request.retain(), ctx.voidPromise());
        }
        flusher.flush();
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      OPS.incrementAndGet();
      ctx.write(request.retain(), ctx.voidPromise());
      flusher.flush();
    }
  }

  static String repeat(char c, int n) {
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      sb.append(c);
    }
    return sb.toString();
  }

  // ---------------------------------------------------------------- custom codec

  static final byte[] EMPTY = new byte[0];
  static final String[] METHODS = {"GET", "POST", "PUT", "DELETE", "PATCH"};

  static final class Request {
    final String uri;
    final String method;
    final long seq;
    final long timestamp;
    final byte[] payload;

    Request(String uri, String method, long seq, long timestamp, byte[] payload) {
      this.uri = uri;
      this.method = method;
      this.seq = seq;
      this.timestamp = timestamp;
      this.payload = payload;
    }
  }

  static final class Reply {
    final String uri;
    final String method;
    final long seq;
    final long timestamp;
    final int status;
    final byte[] payload;

    Reply(String uri, String method, long seq, long timestamp, int status, byte[] payload) {
      this.uri = uri;
      this.method = method;
      this.seq = seq;
      this.timestamp = timestamp;
      this.status = status;
      this.payload = payload;
    }
  }

  static void ascii(ZMTPWriter w, String s, boolean more) {
    ByteBuf f = w.frame(s.length(), more);
    for (int i = 0; i < s.length(); i++) {
      f.writeByte(s.charAt(i));
    }
  }

  static final class RequestEncoder implements ZMTPEncoder {
    @Override
    public void estimate(Object message, ZMTPEstimator e) {
      Request r = (Request) message;
      e.frame(r.uri.length());
      e.frame(r.method.length());
      e.frame(16);
      e.frame(r.payload.length);
    }

    @Override
    public void encode(Object message, ZMTPWriter w) {
      Request r = (Request) message;
      ascii(w, r.uri, true);
      ascii(w, r.method, true);
      w.frame(16, true).writeLong(r.seq).writeLong(r.timestamp);
      w.frame(r.payload.length, false).writeBytes(r.payload);
    }

    @Override
    public void close() {}
  }

  static final class ReplyEncoder implements ZMTPEncoder {
    @Override
    public void estimate(Object message, ZMTPEstimator e) {
      Reply r = (Reply) message;
      e.frame(r.uri.length());
      e.frame(r.method.length());
      e.frame(16);
      e.frame(4);
      e.frame(r.payload.length);
    }

    @Override
    public void encode(Object message, ZMTPWriter w) {
      Reply r = (Reply) message;
      ascii(w, r.uri, true);
      ascii(w, r.method, true);
      w.frame(16, true).writeLong(r.seq).writeLong(r.timestamp);
      w.frame(4, true).writeInt(r.status);
      w.frame(r.payload.length, false).writeBytes(r.payload);
    }

    @Override
    public void close() {}
  }

  static String method(ByteBuf b, int n) {
    for (String m : METHODS) {
      if (m.length() == n) {
        boolean eq = true;
        for (int i = 0; i < n; i++) {
          if (b.getByte(b.readerIndex() + i) != m.charAt(i)) {
            eq = false;
            break;
          }
        }
        if (eq) {
          b.skipBytes(n);
          return m;
        }
      }
    }
    byte[] a = new byte[n];
    b.readBytes(a);
    return new String(a, StandardCharsets.US_ASCII);
  }

  static byte[] bytes(ByteBuf b, int n) {
    if (n == 0) {
      return EMPTY;
    }
    byte[] a = new byte[n];
    b.readBytes(a);
    return a;
  }

  /** netty4-zmtp's decoder contract: header(), then content() until the frame is there. */
  abstract static class FrameDecoder implements ZMTPDecoder {
    int part;
    int frameLength;

    @Override
    public void header(ChannelHandlerContext ctx, long length, boolean more, List<Object> out) {
      frameLength = (int) length;
    }

    @Override
    public void content(ChannelHandlerContext ctx, ByteBuf data, List<Object> out) {
      if (data.readableBytes() < frameLength) {
        return;
      }
      frame(data, part++);
    }

    abstract void frame(ByteBuf data, int index);

    @Override
    public void close() {}
  }

  static final class RequestDecoder extends FrameDecoder {
    String uri;
    String method;
    long seq;
    long ts;
    byte[] payload;

    @Override
    void frame(ByteBuf d, int index) {
      switch (index) {
        case 0: uri = new String(bytes(d, frameLength), StandardCharsets.US_ASCII); break;
        case 1: method = method(d, frameLength); break;
        case 2: seq = d.readLong(); ts = d.readLong(); break;
        default: payload = bytes(d, frameLength);
      }
    }

    @Override
    public void finish(ChannelHandlerContext ctx, List<Object> out) {
      out.add(new Request(uri, method, seq, ts, payload));
      part = 0;
    }
  }

  static final class ReplyDecoder extends FrameDecoder {
    String uri;
    String method;
    long seq;
    long ts;
    int status;
    byte[] payload;

    @Override
    void frame(ByteBuf d, int index) {
      switch (index) {
        case 0: uri = new String(bytes(d, frameLength), StandardCharsets.US_ASCII); break;
        case 1: method = method(d, frameLength); break;
        case 2: seq = d.readLong(); ts = d.readLong(); break;
        case 3: status = d.readInt(); break;
        default: payload = bytes(d, frameLength);
      }
    }

    @Override
    public void finish(ChannelHandlerContext ctx, List<Object> out) {
      out.add(new Reply(uri, method, seq, ts, status, payload));
      part = 0;
    }
  }

  static final class CustomServer extends ChannelInboundHandlerAdapter {
    private static final byte[] HELLO = "hello world".getBytes(StandardCharsets.US_ASCII);
    private BatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new BatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Request r = (Request) msg;
      ctx.write(new Reply(r.uri, r.method, r.seq, r.timestamp, 200, HELLO), ctx.voidPromise());
      flusher.flush();
    }
  }

  static final class CustomClient extends ChannelInboundHandlerAdapter {
    private BatchFlusher flusher;
    private long seq = System.nanoTime() | 1;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new BatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    private Request next() {
      seq ^= seq << 21;
      seq ^= seq >>> 35;
      seq ^= seq << 4;
      return new Request("foo://bar/some/resource", "GET", seq, System.nanoTime(), EMPTY);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZMTPHandshakeSuccess) {
        for (int i = 0; i < inFlight; i++) {
          ctx.write(next(), ctx.voidPromise());
        }
        flusher.flush();
      }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      Reply r = (Reply) msg;
      if (r.status != 200) {
        throw new IllegalStateException("status " + r.status);
      }
      LATENCY_NS.addAndGet(System.nanoTime() - r.timestamp);
      OPS.incrementAndGet();
      ctx.write(next(), ctx.voidPromise());
      flusher.flush();
    }
  }
}
