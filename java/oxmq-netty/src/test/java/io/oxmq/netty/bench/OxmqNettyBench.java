package io.oxmq.netty.bench;

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
import io.oxmq.netty.FloorCodec;
import io.oxmq.netty.ZmtpBatchFlusher;
import io.oxmq.netty.ZmtpCodec;
import io.oxmq.netty.ZmtpDecoder;
import io.oxmq.netty.ZmtpEncoder;
import io.oxmq.netty.ZmtpHandshakeSuccess;
import io.oxmq.netty.ZmtpMessage;
import io.oxmq.netty.ZmtpSocketType;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * netty-zmtp's three benchmarks, written for oxmq-netty (the same patterns as netty4-zmtp's
 * ThroughputBenchmark, ReqRepBenchmark and CustomReqRepBenchmark; see Netty4ZmtpBench for the
 * netty4-zmtp side):
 *
 * <pre>OxmqNettyBench throughput|reqrep|custom|custom-floor WARMUP_S MEASURE_S [CONNECTIONS]</pre>
 *
 * <p>Prints {@code RESULT <mode> <ops per second> <average latency in µs>}: messages/s one-way,
 * requests/s with 1000 requests in flight, spread over CONNECTIONS clients (default 1). Latency
 * is measured per request in {@code custom} and is 1000 / rate (Little's law) in {@code reqrep};
 * {@code throughput} has none (0). {@code custom-floor} is {@code custom} with {@link FloorCodec}
 * in place of the ZMTP codec: the rate this benchmark allows any codec here.
 *
 * <p>Handlers write with the channel's void promise: none of them looks at a write's future, and
 * netty4-zmtp 0.4.0 never completes those futures on netty 4.0.43 and later (its aggregate
 * promise overrides {@code trySuccess()}, which netty's outbound buffer no longer calls), so
 * a promise per write would be work that only one of the two codecs does.
 */
public final class OxmqNettyBench {
  static final int CONCURRENCY = 1000;
  // requests in flight per connection: CONCURRENCY spread over the connections
  static int inFlight = CONCURRENCY;
  static final AtomicLong OPS = new AtomicLong();
  static final AtomicLong LATENCY_NS = new AtomicLong();

  private OxmqNettyBench() {}

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
    Supplier<ChannelHandler> serverCodec;
    Supplier<ChannelHandler> clientCodec;
    Supplier<ChannelInboundHandlerAdapter> serverHandler;
    Supplier<ChannelInboundHandlerAdapter> clientHandler;
    switch (mode) {
      case "throughput":
        serverCodec = () -> ZmtpCodec.of(ZmtpSocketType.ROUTER);
        clientCodec = () -> ZmtpCodec.of(ZmtpSocketType.DEALER);
        serverHandler = CountingSink::new;
        clientHandler = Blaster::new;
        break;
      case "reqrep":
        serverCodec = () -> ZmtpCodec.of(ZmtpSocketType.ROUTER);
        clientCodec = () -> ZmtpCodec.of(ZmtpSocketType.DEALER);
        serverHandler = Echo::new;
        clientHandler = Requester::new;
        break;
      case "custom":
        serverCodec = () -> ZmtpCodec.builder().socketType(ZmtpSocketType.ROUTER)
            .encoder(Reply.class, Custom.REPLY_ENCODER).decoder(Custom.RequestDecoder::new).build();
        clientCodec = () -> ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER)
            .encoder(Request.class, Custom.REQUEST_ENCODER).decoder(Custom.ReplyDecoder::new)
            .build();
        serverHandler = CustomServer::new;
        clientHandler = CustomClient::new;
        break;
      case "custom-floor":
        serverCodec = () -> new FloorCodec(ZmtpSocketType.DEALER, Custom.REPLY_ENCODER,
            new Custom.RequestDecoder());
        clientCodec = () -> new FloorCodec(ZmtpSocketType.ROUTER, Custom.REQUEST_ENCODER,
            new Custom.ReplyDecoder());
        serverHandler = CustomServer::new;
        clientHandler = CustomClient::new;
        break;
      default:
        throw new IllegalArgumentException("mode: throughput|reqrep|custom|custom-floor");
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
    BenchMeter.report(mode, warmup, measure, OPS, LATENCY_NS, mode.equals("reqrep") ? CONCURRENCY : 0);
    for (Channel c : client) {
      c.close().sync();
    }
    server.close().sync();
    clientGroup.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
    serverWorkers.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
    boss.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.SECONDS);
    System.exit(0);
  }

  /** Counts ByteBufs only as pending bytes, as netty-zmtp's benchmarks do. */
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

  // ---------------------------------------------------------------- one-way throughput

  static final class CountingSink extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ReferenceCountUtil.release(msg);
      OPS.incrementAndGet();
    }
  }

  static final class Blaster extends ChannelInboundHandlerAdapter {
    private static final int BATCH = 128;
    private final ZmtpMessage message = ZmtpMessage.fromUtf8(".".repeat(100));
    private ZmtpBatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new ZmtpBatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZmtpHandshakeSuccess) {
        send(ctx);
      }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
      send(ctx);
    }

    private void send(ChannelHandlerContext ctx) {
      while (ctx.channel().isWritable()) {
        for (int i = 0; i < BATCH; i++) {
          ctx.write(message.retain(), ctx.voidPromise());
        }
        flusher.flush();
      }
    }
  }

  // ---------------------------------------------------------------- req/rep

  static final class Echo extends ChannelInboundHandlerAdapter {
    private ZmtpBatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new ZmtpBatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      ctx.write(msg, ctx.voidPromise());
      flusher.flush();
    }
  }

  static final class Requester extends ChannelInboundHandlerAdapter {
    private final ZmtpMessage request = ZmtpMessage.fromUtf8("envelope1", "envelope2", "",
        "d".repeat(20), "d".repeat(40), "d".repeat(100));
    private ZmtpBatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new ZmtpBatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZmtpHandshakeSuccess) {
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

  // ---------------------------------------------------------------- custom codec req/rep

  /** A request: uri, method, id (seq + send time), payload. */
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

  /** A reply: the request's uri, method and id, a status code, a payload. */
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

  static final class Custom {
    static final byte[] EMPTY = new byte[0];
    static final String[] METHODS = {"GET", "POST", "PUT", "DELETE", "PATCH"};

    // A byte at a time, as netty-zmtp's benchmark (and Netty4ZmtpBench) writes its strings.
    static void ascii(io.oxmq.netty.ZmtpWriter w, String s, boolean more) {
      ByteBuf f = w.frame(s.length(), more);
      for (int i = 0; i < s.length(); i++) {
        f.writeByte(s.charAt(i));
      }
    }

    // Classes, as in Netty4ZmtpBench, rather than lambdas (a lambda is one call deeper).
    static final ZmtpEncoder<Request> REQUEST_ENCODER = new RequestEncoder();
    static final ZmtpEncoder<Reply> REPLY_ENCODER = new ReplyEncoder();

    static final class RequestEncoder implements ZmtpEncoder<Request> {
      @Override
      public void encode(Request r, io.oxmq.netty.ZmtpWriter w) {
        ascii(w, r.uri, true);
        ascii(w, r.method, true);
        w.frame(16, true).writeLong(r.seq).writeLong(r.timestamp);
        w.frame(r.payload.length, false).writeBytes(r.payload);
      }
    }

    static final class ReplyEncoder implements ZmtpEncoder<Reply> {
      @Override
      public void encode(Reply r, io.oxmq.netty.ZmtpWriter w) {
        ascii(w, r.uri, true);
        ascii(w, r.method, true);
        w.frame(16, true).writeLong(r.seq).writeLong(r.timestamp);
        w.frame(4, true).writeInt(r.status);
        w.frame(r.payload.length, false).writeBytes(r.payload);
      }
    }

    static String method(ByteBuf b) {
      int n = b.readableBytes();
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
            return m;
          }
        }
      }
      return b.toString(StandardCharsets.US_ASCII);
    }

    static byte[] bytes(ByteBuf b) {
      if (!b.isReadable()) {
        return EMPTY;
      }
      byte[] a = new byte[b.readableBytes()];
      b.getBytes(b.readerIndex(), a);
      return a;
    }

    static final class RequestDecoder implements ZmtpDecoder {
      private int part;
      private String uri;
      private String method;
      private long seq;
      private long ts;

      @Override
      public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
        switch (part++) {
          case 0: uri = body.toString(StandardCharsets.US_ASCII); break;
          case 1: method = method(body); break;
          case 2: seq = body.getLong(body.readerIndex()); ts = body.getLong(body.readerIndex() + 8); break;
          default:
            out.add(new Request(uri, method, seq, ts, bytes(body)));
            part = 0;
        }
      }
    }

    static final class ReplyDecoder implements ZmtpDecoder {
      private int part;
      private String uri;
      private String method;
      private long seq;
      private long ts;
      private int status;

      @Override
      public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
        switch (part++) {
          case 0: uri = body.toString(StandardCharsets.US_ASCII); break;
          case 1: method = method(body); break;
          case 2: seq = body.getLong(body.readerIndex()); ts = body.getLong(body.readerIndex() + 8); break;
          case 3: status = body.getInt(body.readerIndex()); break;
          default:
            out.add(new Reply(uri, method, seq, ts, status, bytes(body)));
            part = 0;
        }
      }
    }
  }

  static final class CustomServer extends ChannelInboundHandlerAdapter {
    private static final byte[] HELLO = "hello world".getBytes(StandardCharsets.US_ASCII);
    private ZmtpBatchFlusher flusher;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new ZmtpBatchFlusher(ctx.channel());
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
    private ZmtpBatchFlusher flusher;
    private long seq = System.nanoTime() | 1;

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) throws Exception {
      flusher = new ZmtpBatchFlusher(ctx.channel());
      super.channelRegistered(ctx);
    }

    private Request next() {
      seq ^= seq << 21;
      seq ^= seq >>> 35;
      seq ^= seq << 4;
      return new Request("foo://bar/some/resource", "GET", seq, System.nanoTime(), Custom.EMPTY);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
      if (evt instanceof ZmtpHandshakeSuccess) {
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
