package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.ReferenceCountUtil;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A ZMTP codec: one handler per channel that runs the handshake, then decodes incoming frames
 * and encodes outgoing messages.
 *
 * <p>Inbound: the first event after a successful handshake is a {@link ZmtpHandshakeSuccess}
 * user event; then each message arrives as a {@link ZmtpMessage} (or whatever the configured
 * {@link ZmtpDecoder} produces), and subscriptions on a PUB/XPUB socket as
 * {@link ZmtpSubscription}s. Other ZMTP 3.x commands than those the codec handles (READY, PING,
 * PONG, ERROR, SUBSCRIBE, CANCEL) arrive as {@link ZmtpCommand} user events.
 *
 * <p>Outbound: write {@link ZmtpMessage}s, {@link ZmtpSubscription}s, or objects of the type of
 * the configured {@link ZmtpEncoder}. Writes before the handshake completes are held and sent
 * after it. Encoded messages are gathered in 16 KiB buffers that go down the pipeline on
 * {@code flush} (or once 512 KiB is held), so writability reflects flushed data only, as with
 * netty-zmtp; frames over 8 KiB are passed on without copying.
 *
 * <p>Errors: a protocol violation (see {@link ZmtpException#kind()}) or a frame over
 * {@link Builder#maxFrameSize} (checked on the header, before anything is allocated) fires
 * {@code exceptionCaught} with the {@link ZmtpException} and closes the channel; the codec then
 * discards all further input. So does a handshake not complete within
 * {@link Builder#handshakeTimeout} (kind {@code HandshakeTimeout}): a peer that connects and
 * stays silent, or stops halfway, does not hold the channel forever. With
 * {@link Builder#heartbeatInterval} set, a ZMTP 3.1 connection sends PING commands and is
 * closed ({@code HeartbeatTimeout}) when nothing arrives within the heartbeat timeout of one;
 * a peer's PING that carries a TTL is honoured the same way, as libzmq does.
 *
 * <p>Security: the NULL mechanism, or PLAIN (RFC 24) with {@link Builder#plainClient} or
 * {@link Builder#plainServer}, over ZMTP 3.x only.
 *
 * <p>Not sharable: build one codec per channel.
 */
public final class ZmtpCodec extends ByteToMessageDecoder implements ChannelOutboundHandler {
  private static final int BATCH_LIMIT = 16 * 1024;
  /**
   * Encoded bytes held until flush; beyond this they go down the pipeline (and count there).
   * Small enough that the kernel's copy at the socket write still finds them in the core's L2
   * (0.5-1 MiB on current x86) beside the rest of the working set; a larger hold makes it read
   * them back from further away.
   */
  private static final int HOLD_LIMIT = 512 * 1024;
  private static final int COPY_LIMIT = 8 * 1024;

  private final ZmtpSocketType socketType;
  private final Class<?> encoderType;
  @SuppressWarnings("rawtypes")
  private final ZmtpEncoder encoder;
  private final ZmtpDecoder decoder;
  private final ZmtpMessageDecoder messageDecoder; // the default decoder, or null
  private final long maxFrameSize;
  private final long handshakeTimeoutNanos;
  private ScheduledFuture<?> handshakeTimer;
  private final long heartbeatIntervalNanos;
  private final long heartbeatTimeoutNanos;
  private final int heartbeatTtlDeciseconds;
  private ScheduledFuture<?> pingTimer;
  private Deadline pingDeadline; // nothing heard since our last PING
  private Deadline ttlDeadline; // nothing heard since the peer's last PING with a TTL
  private long inputs; // decode calls after the handshake: what a deadline looks at
  private final ZmtpWire.Header header = new ZmtpWire.Header();
  private ZmtpBodySlice bodySlice; // what an application decoder is given; see body()
  private ByteBuf bodyMemOf; // the input whose memory bodyMem is, in this decode call
  private ByteBuffer bodyMem;
  private int bodyMemZero; // bodyMem's index of bodyMemOf's index 0
  private final Writer writer = new Writer();

  private ZmtpHandshaker handshaker;
  private ZmtpProtocol protocol;
  private boolean started;
  private boolean failed;
  private boolean subscriptionMessages; // a PUB/XPUB reading 0x01/0x00 messages (3.0, 2.0)
  private boolean firstFrame = true;
  private ArrayDeque<Object> held; // msg, promise pairs written before the handshake
  private ChannelHandlerContext ctx;
  private ByteBuf batch;
  private final ArrayList<ByteBuf> full = new ArrayList<>(); // encoded, in order, not yet written
  private int fullBytes;
  // The promises of encoded messages, in write order: those written down the pipeline and
  // waiting for their batch's write to complete, then the last `unflushed` ones, not yet written.
  private final ArrayDeque<ChannelPromise> promises = new ArrayDeque<>();
  private int unflushed;

  private ZmtpCodec(Builder b) {
    this.socketType = b.socketType;
    this.encoderType = b.encoderType;
    this.encoder = b.encoder;
    this.decoder = b.decoder.get();
    this.messageDecoder = decoder instanceof ZmtpMessageDecoder ? (ZmtpMessageDecoder) decoder
        : null;
    this.maxFrameSize = b.maxFrameSize;
    this.handshakeTimeoutNanos = b.handshakeTimeout.toNanos();
    this.heartbeatIntervalNanos = b.heartbeatInterval.toNanos();
    this.heartbeatTimeoutNanos = (b.heartbeatTimeout != null ? b.heartbeatTimeout
        : b.heartbeatInterval).toNanos();
    this.heartbeatTtlDeciseconds = (int) Math.min(0xFFFF, b.heartbeatTtl.toMillis() / 100);
    this.handshaker = new ZmtpHandshaker(socketType, b.identity, b.protocol, b.asServer,
        b.maxFrameSize, b.plain);
    setCumulator(CUMULATOR);
  }

  /**
   * How a read joins the unread rest of the previous ones. A stream of small frames leaves a
   * partial frame at the end of most reads: netty's merging cumulator appends each read to the
   * previous buffer and grows it by reallocation (copying what was already consumed too) until
   * a read ends on a frame boundary; a composite buffer makes every header and body access go
   * through a component lookup. Here a read that finds nothing unread is taken as it came; one
   * that fits in the rest of an exclusively held buffer is appended to it; otherwise the unread
   * rest and the read are copied into one new buffer of exactly their size (slices handed out
   * keep the old buffer alive as long as they need it).
   */
  private static final Cumulator CUMULATOR = (alloc, cumulation, in) -> {
    if (!cumulation.isReadable()) {
      cumulation.release();
      return in;
    }
    try {
      int add = in.readableBytes();
      if (cumulation.refCnt() == 1 && !cumulation.isReadOnly()
          && cumulation.maxFastWritableBytes() >= add) {
        cumulation.writeBytes(in, in.readerIndex(), add);
        return cumulation;
      }
      ByteBuf joined = alloc.ioBuffer(cumulation.readableBytes() + add);
      joined.writeBytes(cumulation, cumulation.readerIndex(), cumulation.readableBytes());
      joined.writeBytes(in, in.readerIndex(), add);
      cumulation.release();
      return joined;
    } finally {
      in.release();
    }
  };

  /** @return a builder; the socket type is required */
  public static Builder builder() {
    return new Builder();
  }

  /** @return a codec of this socket type with all defaults */
  public static ZmtpCodec of(ZmtpSocketType socketType) {
    return builder().socketType(socketType).build();
  }

  /** @return the negotiated protocol, or null before the handshake completes */
  public ZmtpProtocol protocol() {
    return protocol;
  }

  // ---------------------------------------------------------------- lifecycle

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    if (ctx.channel().isActive()) {
      start(ctx);
    }
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    start(ctx);
    super.channelActive(ctx);
  }

  private void start(ChannelHandlerContext ctx) {
    if (started) {
      return;
    }
    started = true;
    ByteBuf out = ctx.alloc().buffer(64);
    handshaker.start(out);
    ctx.writeAndFlush(out);
    if (handshakeTimeoutNanos > 0) {
      handshakeTimer = ctx.executor().schedule(this::handshakeExpired, handshakeTimeoutNanos,
          TimeUnit.NANOSECONDS);
    }
  }

  private void handshakeExpired() {
    handshakeTimer = null;
    if (handshaker == null || failed) {
      return;
    }
    fail(new ZmtpException("HandshakeTimeout", "no handshake within "
        + TimeUnit.NANOSECONDS.toMillis(handshakeTimeoutNanos) + " ms"));
  }

  /** Ends the channel on a protocol failure: later input is discarded, the pipeline told. */
  private void fail(ZmtpException e) {
    failed = true;
    ctx.fireExceptionCaught(e);
    ctx.close();
  }

  private void cancelHandshakeTimer() {
    if (handshakeTimer != null) {
      handshakeTimer.cancel(false);
      handshakeTimer = null;
    }
  }

  /**
   * A limit on the peer's silence: it fails the channel unless some input arrived between
   * {@link #arm} and the expiry.
   */
  private final class Deadline implements Runnable {
    private final String what;
    private ScheduledFuture<?> timer;
    private long since;

    Deadline(String what) {
      this.what = what;
    }

    /** Starts the wait, unless one is already running (which then keeps its own expiry). */
    void arm(long nanos) {
      if (timer == null && !failed) {
        since = inputs;
        timer = ctx.executor().schedule(this, nanos, TimeUnit.NANOSECONDS);
      }
    }

    void cancel() {
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
    }

    @Override
    public void run() {
      timer = null;
      if (inputs == since && !failed) {
        fail(new ZmtpException("HeartbeatTimeout", "nothing from the peer " + what));
      }
    }
  }

  /** After a 3.1 handshake: the first PING one interval from now, then one per interval. */
  private void startHeartbeats() {
    if (heartbeatIntervalNanos > 0 && protocol == ZmtpProtocol.ZMTP31) {
      pingDeadline = new Deadline("within "
          + TimeUnit.NANOSECONDS.toMillis(heartbeatTimeoutNanos) + " ms of a PING");
      pingTimer = ctx.executor().scheduleAtFixedRate(this::ping, heartbeatIntervalNanos,
          heartbeatIntervalNanos, TimeUnit.NANOSECONDS);
    }
  }

  private void ping() {
    if (failed || !ctx.channel().isActive()) {
      return;
    }
    sendCommand(ctx, ZmtpCommand.ping(heartbeatTtlDeciseconds, new byte[0]));
    pingDeadline.arm(heartbeatTimeoutNanos);
  }

  private void stopHeartbeats() {
    if (pingTimer != null) {
      pingTimer.cancel(false);
      pingTimer = null;
    }
    if (pingDeadline != null) {
      pingDeadline.cancel();
    }
    if (ttlDeadline != null) {
      ttlDeadline.cancel();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cleanup();
    super.channelInactive(ctx);
  }

  @Override
  protected void handlerRemoved0(ChannelHandlerContext ctx) {
    cleanup();
  }

  private void cleanup() {
    cancelHandshakeTimer();
    stopHeartbeats();
    decoder.close();
    if (batch != null) {
      batch.release();
      batch = null;
    }
    for (ByteBuf b : full) {
      b.release();
    }
    full.clear();
    fullBytes = 0;
    failPromises(new java.nio.channels.ClosedChannelException());
    if (held != null) {
      while (!held.isEmpty()) {
        ReferenceCountUtil.release(held.poll());
        ((ChannelPromise) held.poll()).tryFailure(new java.nio.channels.ClosedChannelException());
      }
    }
  }

  /** Fails the promises of what was not written down the pipeline yet. */
  private void failPromises(Throwable t) {
    for (; unflushed > 0; unflushed--) {
      promises.pollLast().tryFailure(t);
    }
  }

  // ---------------------------------------------------------------- inbound

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (failed) {
      in.skipBytes(in.readableBytes());
      return;
    }
    try {
      if (handshaker != null && !handshake(ctx, in)) {
        return;
      }
      inputs++;
      decodeFrames(ctx, in, out);
    } catch (ZmtpException e) {
      in.skipBytes(in.readableBytes());
      fail(e);
    }
  }

  /**
   * Decodes the whole frames in {@code in}. The default message decoder is given where each
   * frame is; the references its messages hold on {@code in} are taken together, with one
   * {@code retain(n)}, and {@code in}'s reader index is set, on the way out, or before anything
   * that runs application code (a command's handling, an application decoder), so that code
   * sees the input as consumed up to the frame it is given.
   */
  private void decodeFrames(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    final ZmtpProtocol v = protocol;
    final ZmtpWire.Header h = header;
    final int end = in.writerIndex();
    int r = in.readerIndex(); // the next frame's start
    bodyMemOf = null;
    int owed = 0; // references on in that messages took since in was last settled
    try {
      for (;;) {
        int hl;
        int len;
        boolean more;
        boolean command;
        // A short data frame is parsed here, in the loop; the rest by parse().
        int fl = v != ZmtpProtocol.ZMTP10 && end - r >= 2 ? in.getUnsignedShort(r) : -1;
        int sl = ZmtpWire.shortDataLength(fl);
        if (sl >= 0 && sl <= maxFrameSize) {
          hl = 2;
          len = sl;
          more = ZmtpWire.shortDataMore(fl);
          command = false;
        } else {
          hl = ZmtpWire.parse(v, in, r, maxFrameSize, false, h);
          if (hl == 0) {
            return;
          }
          len = (int) h.length;
          more = h.more;
          command = h.command;
        }
        if (end - r - hl < len) {
          return;
        }
        int frameStart = r;
        int start = r + hl;
        r = start + len;
        if (command) {
          ByteBuf body = in.slice(start, len);
          settle(in, r, owed);
          owed = 0;
          command(ctx, body, out);
        } else if (subscriptionMessages && firstFrame && !more && len > 0
            && (in.getByte(start) & 0xFE) == 0) {
          byte[] topic = new byte[len - 1];
          in.getBytes(start + 1, topic);
          out.add(new ZmtpSubscription(in.getByte(start) == 1, topic));
        } else {
          firstFrame = !more;
          if (messageDecoder != null) {
            // No slice per frame (the message makes them when asked, as plain slices) and no
            // reference per frame: a message takes one on in for all its frames.
            owed += messageDecoder.frame(in, start, len, frameStart, r, v == ZmtpProtocol.ZMTP10,
                more, out);
          } else {
            ByteBuf body = body(in, start, len);
            in.readerIndex(r);
            decoder.frame(ctx, body, more, out);
          }
        }
      }
    } finally {
      settle(in, r, owed);
    }
  }

  /**
   * A frame body for an application decoder: the one {@link ZmtpBodySlice}, pointed at it,
   * unless the decoder retained the last one (then a new one), or a plain slice when the input's
   * memory is not one NIO buffer.
   */
  private ByteBuf body(ByteBuf in, int start, int len) {
    if (bodyMemOf != in) {
      // once per decode call: an input buffer may be a recycled object over other memory
      bodyMemOf = in;
      if (in.nioBufferCount() == 1) {
        ByteBuffer m = in.internalNioBuffer(0, in.capacity()).duplicate();
        bodyMemZero = m.position();
        bodyMem = m;
      } else {
        bodyMem = null;
      }
    }
    if (bodyMem == null) {
      return in.slice(start, len);
    }
    ZmtpBodySlice b = bodySlice;
    if (b == null || b.retained()) {
      b = bodySlice = new ZmtpBodySlice();
    }
    return b.point(in, bodyMem, bodyMemZero, start, len);
  }

  private static void settle(ByteBuf in, int readerIndex, int owed) {
    in.readerIndex(readerIndex);
    if (owed > 0) {
      in.retain(owed);
    }
  }

  private boolean handshake(ChannelHandlerContext ctx, ByteBuf in) {
    ByteBuf reply = ctx.alloc().buffer(64);
    boolean done;
    try {
      done = handshaker.feed(in, reply);
    } finally {
      if (reply.isReadable()) {
        ctx.writeAndFlush(reply);
      } else {
        reply.release();
      }
    }
    if (!done) {
      return false;
    }
    ZmtpHandshaker hs = handshaker;
    handshaker = null;
    cancelHandshakeTimer();
    protocol = hs.negotiated();
    startHeartbeats();
    boolean pub = socketType == ZmtpSocketType.PUB || socketType == ZmtpSocketType.XPUB;
    subscriptionMessages = pub && protocol != ZmtpProtocol.ZMTP10;
    ctx.fireUserEventTriggered(new ZmtpHandshakeSuccess(protocol, hs.peerSocketType(),
        hs.peerIdentity(), hs.mechanism(), hs.userId()));
    if (pub && protocol == ZmtpProtocol.ZMTP10) {
      ctx.fireChannelRead(new ZmtpSubscription(true, new byte[0]));
    }
    if (held != null) {
      while (!held.isEmpty()) {
        encode(ctx, held.poll(), (ChannelPromise) held.poll());
      }
      held = null;
      flushBatch(ctx);
      ctx.flush();
    }
    return true;
  }

  private void command(ChannelHandlerContext ctx, ByteBuf body, List<Object> out) {
    ZmtpCommand cmd = ZmtpCommand.parse(body);
    switch (cmd.name()) {
      case "PING": {
        if (cmd.ttl() > 0) {
          if (ttlDeadline == null) {
            ttlDeadline = new Deadline("within the TTL of its PING");
          }
          ttlDeadline.arm(TimeUnit.MILLISECONDS.toNanos(cmd.ttl() * 100L));
        }
        sendCommand(ctx, ZmtpCommand.pong(cmd.data()));
        break;
      }
      case "PONG":
        break;
      case "ERROR":
        throw new ZmtpException("PeerError", "peer sent ERROR: " + cmd.reason());
      case "SUBSCRIBE":
      case "CANCEL":
        out.add(new ZmtpSubscription(cmd.name().equals("SUBSCRIBE"), cmd.data()));
        break;
      case "READY":
        throw new ZmtpException("UnexpectedCommand", "READY after the handshake");
      default:
        ctx.fireUserEventTriggered(cmd);
    }
  }

  // ---------------------------------------------------------------- outbound

  @Override
  public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    if (handshaker != null) {
      if (held == null) {
        held = new ArrayDeque<>();
      }
      held.add(msg);
      held.add(promise);
      return;
    }
    encode(ctx, msg, promise);
  }

  @SuppressWarnings("unchecked")
  private void encode(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
    ByteBuf batch0 = batch;
    int index0 = batch0 != null ? batch0.writerIndex() : 0;
    int held0 = full.size();
    try {
      if (encoderType != null && encoderType.isInstance(msg)) {
        writer.begin(ctx);
        try {
          encoder.encode(msg, writer);
          writer.end();
        } finally {
          ReferenceCountUtil.release(msg);
        }
      } else if (msg instanceof ZmtpMessage) {
        ZmtpMessage m = (ZmtpMessage) msg;
        try {
          encodeMessage(ctx, m);
        } finally {
          m.release();
        }
      } else if (msg instanceof ZmtpSubscription) {
        encodeSubscription(ctx, (ZmtpSubscription) msg);
      } else {
        ReferenceCountUtil.release(msg);
        throw new IllegalArgumentException("ZmtpCodec cannot write a "
            + (msg == null ? "null" : msg.getClass().getName()));
      }
    } catch (RuntimeException e) {
      rollBack(batch0, index0, held0);
      promise.tryFailure(e);
      return;
    }
    if (!promise.isVoid()) {
      promises.add(promise);
      unflushed++;
    }
    if (batch != null && batch.readableBytes() >= BATCH_LIMIT) {
      sealBatch();
    }
    if (fullBytes >= HOLD_LIMIT) {
      flushBatch(ctx);
    }
  }

  /**
   * Takes back what a message that failed to encode had written: the buffers it held, and its
   * bytes in the batch it started in ({@code batch0}, then at {@code index0}; null if there was
   * none), so that the stream goes on with the next message. Nothing goes down the pipeline
   * while a message is encoded, so all of it is still here.
   */
  private void rollBack(ByteBuf batch0, int index0, int held0) {
    writer.abort();
    ByteBuf sealed0 = null;
    while (full.size() > held0) {
      ByteBuf b = full.remove(full.size() - 1);
      fullBytes -= b.readableBytes();
      if (b == batch0) {
        sealed0 = b;
      } else {
        b.release();
      }
    }
    if (batch != null && batch != batch0) {
      batch.release();
      batch = null;
    }
    if (sealed0 != null) {
      batch = sealed0;
    }
    if (batch != null) {
      batch.writerIndex(index0);
    }
  }

  /** Moves the current batch to the held list. */
  private void sealBatch() {
    ByteBuf b = batch;
    if (b != null) {
      batch = null;
      hold(b);
    }
  }

  /** Holds {@code b} for the next flush; {@link #encode} writes the held ones out once large. */
  private void hold(ByteBuf b) {
    full.add(b);
    fullBytes += b.readableBytes();
  }

  private ByteBuf batch(ChannelHandlerContext ctx, int need) {
    ByteBuf b = batch;
    if (b == null) {
      // sized for a whole batch up front: growing it would copy what it holds
      b = batch = ctx.alloc().ioBuffer(Math.max(need, BATCH_LIMIT + 512));
    } else {
      b.ensureWritable(need);
    }
    return b;
  }

  private void encodeMessage(ChannelHandlerContext ctx, ZmtpMessage m) {
    final ZmtpProtocol v = protocol;
    int wire = m.wireLength(v);
    if (wire >= 0) {
      // A received message sent on unchanged (an echo, a proxy): its frames as they arrived,
      // headers and bodies in one copy, or by reference over the copy limit.
      if (wire > COPY_LIMIT) {
        sealBatch();
        hold(m.wireBuffer().retainedSlice(m.wireStart(), wire));
      } else {
        batch(ctx, wire).writeBytes(m.wireBuffer(), m.wireStart(), wire);
      }
      return;
    }
    int n = m.size();
    for (int i = 0; i < n; i++) {
      ByteBuf f = m.frame(i);
      int len = f.readableBytes();
      boolean more = i < n - 1;
      if (len > COPY_LIMIT) {
        ZmtpWire.write(v, batch(ctx, 10), len, more, false);
        sealBatch();
        hold(f.retainedDuplicate());
      } else {
        ByteBuf b = batch(ctx, 10 + len);
        ZmtpWire.write(v, b, len, more, false);
        b.writeBytes(f, f.readerIndex(), len);
      }
    }
  }

  private void encodeSubscription(ChannelHandlerContext ctx, ZmtpSubscription s) {
    byte[] topic = s.topicRef();
    if (protocol == ZmtpProtocol.ZMTP31) {
      ZmtpCommand.of(s.isSubscribe() ? "SUBSCRIBE" : "CANCEL", topic).writeFrame(batch(ctx, 20 + topic.length));
    } else if (protocol == ZmtpProtocol.ZMTP10) {
      // ZMTP/1.0 has no subscription upstream: the publisher sends everything.
      return;
    } else {
      ByteBuf b = batch(ctx, 10 + topic.length);
      ZmtpWire.write(protocol, b, topic.length + 1L, false, false);
      b.writeByte(s.isSubscribe() ? 1 : 0);
      b.writeBytes(topic);
    }
  }

  /** Writes a command after what is batched (in order) and flushes both. */
  private void sendCommand(ChannelHandlerContext ctx, ZmtpCommand cmd) {
    cmd.writeFrame(batch(ctx, 9 + cmd.bodySize()));
    flushBatch(ctx);
    ctx.flush();
  }

  /** Writes everything encoded so far down the pipeline; the promises complete with the last. */
  private void flushBatch(ChannelHandlerContext ctx) {
    ByteBuf last = batch;
    batch = null;
    int nf = full.size();
    if (last == null) {
      if (nf == 0) {
        return;
      }
      last = full.remove(--nf);
    }
    for (int i = 0; i < nf; i++) {
      ctx.write(full.get(i), ctx.voidPromise());
    }
    full.clear();
    fullBytes = 0;
    int np = unflushed;
    unflushed = 0;
    if (np == 0) {
      ctx.write(last, ctx.voidPromise());
    } else if (np == 1) {
      ctx.write(last, promises.pollLast());
    } else {
      ctx.write(last).addListener(new Completion(np));
    }
  }

  /**
   * Completes the promises of one flush's messages with the write of its last buffer. Writes
   * complete in order, so they are the first {@code count} in {@link #promises}, unless the
   * codec was removed meanwhile and failed them already.
   */
  private final class Completion implements ChannelFutureListener {
    private final int count;

    Completion(int count) {
      this.count = count;
    }

    @Override
    public void operationComplete(ChannelFuture f) {
      Throwable cause = f.cause();
      for (int i = 0; i < count; i++) {
        ChannelPromise p = promises.poll();
        if (p == null) {
          return;
        }
        if (cause == null) {
          p.trySuccess();
        } else {
          p.tryFailure(cause);
        }
      }
    }
  }

  @Override
  public void flush(ChannelHandlerContext ctx) {
    flushBatch(ctx);
    ctx.flush();
  }

  @Override
  public void bind(ChannelHandlerContext ctx, SocketAddress localAddress, ChannelPromise promise) {
    ctx.bind(localAddress, promise);
  }

  @Override
  public void connect(ChannelHandlerContext ctx, SocketAddress remoteAddress,
      SocketAddress localAddress, ChannelPromise promise) {
    ctx.connect(remoteAddress, localAddress, promise);
  }

  @Override
  public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) {
    ctx.disconnect(promise);
  }

  @Override
  public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
    if (!failed && (batch != null || !full.isEmpty()) && ctx.channel().isActive()) {
      flushBatch(ctx);
      ctx.flush();
    }
    ctx.close(promise);
  }

  @Override
  public void deregister(ChannelHandlerContext ctx, ChannelPromise promise) {
    ctx.deregister(promise);
  }

  @Override
  public void read(ChannelHandlerContext ctx) {
    ctx.read();
  }

  /** Writes frames of an application type straight into the batch buffer. */
  private final class Writer implements ZmtpWriter {
    private ChannelHandlerContext wctx;
    private ByteBuf target;
    private int expectEnd = -1;
    private boolean open;

    void begin(ChannelHandlerContext c) {
      wctx = c;
      ByteBuf b = batch;
      target = b;
      expectEnd = b != null ? b.writerIndex() : -1;
      lastSize = 0;
      open = true;
    }

    private void check() {
      if (target != null && target.writerIndex() != expectEnd) {
        throw new IllegalStateException("ZmtpEncoder wrote " + (target.writerIndex()
            - (expectEnd - lastSize)) + " bytes into a frame of " + lastSize);
      }
    }

    private int lastSize;

    @Override
    public ByteBuf frame(int size, boolean more) {
      ByteBuf b = target;
      // The common case, kept small enough to inline into an encoder: a short 2.0/3.x frame
      // after a whole one, with room for it in the batch.
      if (b != null && open && (size & ~0xFF) == 0 && b.writerIndex() == expectEnd
          && b.capacity() - expectEnd >= 2 + size && protocol != ZmtpProtocol.ZMTP10) {
        b.writeShort(ZmtpWire.shortDataHeader(size, more));
        lastSize = size;
        expectEnd += 2 + size;
        open = more;
        return b;
      }
      return nextFrame(size, more);
    }

    private ByteBuf nextFrame(int size, boolean more) {
      if (!open) {
        throw new IllegalStateException("the last frame of this message was already written");
      }
      if (size < 0) {
        throw new IllegalArgumentException("frame size " + size);
      }
      check();
      ByteBuf b = batch(wctx, 10 + size);
      ZmtpWire.write(protocol, b, size, more, false);
      target = b;
      lastSize = size;
      expectEnd = b.writerIndex() + size;
      open = more;
      return b;
    }

    @Override
    public void frame(ByteBuf body, boolean more) {
      int len = body.readableBytes();
      frame(len, more).writeBytes(body, body.readerIndex(), len);
    }

    void end() {
      check();
      if (open) {
        throw new IllegalStateException("ZmtpEncoder ended a message on a frame with MORE");
      }
      target = null;
    }

    /** After a failed encode: no frame is open. */
    void abort() {
      target = null;
    }
  }

  /** Configures a {@link ZmtpCodec}. */
  public static final class Builder {
    private ZmtpSocketType socketType;
    private byte[] identity = new byte[0];
    private ZmtpProtocol protocol = ZmtpProtocol.ZMTP31;
    private boolean asServer;
    private long maxFrameSize = 64L * 1024 * 1024;
    private Duration handshakeTimeout = Duration.ofSeconds(30);
    private Duration heartbeatInterval = Duration.ZERO;
    private Duration heartbeatTimeout;
    private Duration heartbeatTtl = Duration.ZERO;
    private ZmtpPlain plain;
    private Class<?> encoderType;
    private ZmtpEncoder<?> encoder;
    private Supplier<? extends ZmtpDecoder> decoder = ZmtpMessageDecoder::new;

    private Builder() {}

    /** @param t our socket type (required) @return this */
    public Builder socketType(ZmtpSocketType t) {
      this.socketType = Objects.requireNonNull(t);
      return this;
    }

    /** @param id our identity (routing id), at most 255 bytes; default empty @return this */
    public Builder identity(byte[] id) {
      if (id.length > 255) {
        throw new IllegalArgumentException("identity over 255 bytes");
      }
      this.identity = id.clone();
      return this;
    }

    /** @param id our identity as UTF-8 @return this */
    public Builder identity(String id) {
      return identity(id.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The newest protocol we speak (default 3.1). Older peers are detected and spoken to in
     * their revision. {@link ZmtpProtocol#ZMTP10} speaks 1.0 only, without a signature.
     *
     * @param p the protocol
     * @return this
     */
    public Builder protocol(ZmtpProtocol p) {
      this.protocol = Objects.requireNonNull(p);
      return this;
    }

    /**
     * @param asServer the as-server bit of our 3.x greeting with NULL, which ignores it (PLAIN
     *     sets it from the role)
     * @return this
     */
    public Builder asServer(boolean asServer) {
      this.asServer = asServer;
      return this;
    }

    /**
     * @param max the largest frame body accepted, in bytes (default 64 MiB, at most 2 GiB - 64);
     *     a larger frame closes the channel before anything is allocated
     * @return this
     */
    public Builder maxFrameSize(long max) {
      if (max < 0 || max > Integer.MAX_VALUE - 64) {
        throw new IllegalArgumentException("maxFrameSize out of range: " + max);
      }
      this.maxFrameSize = max;
      return this;
    }

    /**
     * Use PLAIN (RFC 24) as its client: the server checks these credentials. ZMTP 3.0 or later
     * only; a 1.0 or 2.0 peer is refused ({@code LegacySecurity}), and so is a NULL peer
     * ({@code MechanismMismatch}). The password crosses the network in clear text.
     *
     * @param username at most 255 bytes as UTF-8
     * @param password at most 255 bytes as UTF-8
     * @return this
     */
    public Builder plainClient(String username, String password) {
      this.plain = ZmtpPlain.client(username, password);
      return this;
    }

    /**
     * Use PLAIN (RFC 24) as its server: each client's user name and password go to
     * {@code authenticator}; the accepted user name is {@link ZmtpHandshakeSuccess#userId()}.
     *
     * @param authenticator decides, on the event loop
     * @return this
     */
    public Builder plainServer(ZmtpPlainAuthenticator authenticator) {
      this.plain = ZmtpPlain.server(authenticator);
      return this;
    }

    /**
     * How long the handshake may take, counted from the channel's activation (default 30 s,
     * libzmq's ZMQ_HANDSHAKE_IVL). Past it the channel is closed after a
     * {@code HandshakeTimeout} {@link ZmtpException}. Zero waits forever.
     *
     * @param timeout the limit, not negative
     * @return this
     */
    public Builder handshakeTimeout(Duration timeout) {
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("negative handshakeTimeout: " + timeout);
      }
      this.handshakeTimeout = timeout;
      return this;
    }

    /**
     * Send a PING every {@code interval} on a ZMTP 3.1 connection (libzmq's
     * ZMQ_HEARTBEAT_IVL; default zero, none). A connection on which nothing arrives within the
     * {@link #heartbeatTimeout} of a PING is closed with a {@code HeartbeatTimeout}
     * {@link ZmtpException}. Older revisions have no PING and are not heartbeated.
     *
     * @param interval time between PINGs, not negative
     * @return this
     */
    public Builder heartbeatInterval(Duration interval) {
      this.heartbeatInterval = nonNegative(interval, "heartbeatInterval");
      return this;
    }

    /**
     * @param timeout how long to wait for any input after a PING (ZMQ_HEARTBEAT_TIMEOUT;
     *     default the interval)
     * @return this
     */
    public Builder heartbeatTimeout(Duration timeout) {
      this.heartbeatTimeout = nonNegative(timeout, "heartbeatTimeout");
      return this;
    }

    /**
     * @param ttl the time-to-live our PINGs carry, in whole deciseconds up to 6553.5 s
     *     (ZMQ_HEARTBEAT_TTL; default zero, none): a peer closes the connection when nothing
     *     from us arrives within it
     * @return this
     */
    public Builder heartbeatTtl(Duration ttl) {
      this.heartbeatTtl = nonNegative(ttl, "heartbeatTtl");
      return this;
    }

    private static Duration nonNegative(Duration d, String what) {
      if (d.isNegative()) {
        throw new IllegalArgumentException("negative " + what + ": " + d);
      }
      return d;
    }

    /**
     * @param type the application type the encoder writes
     * @param encoder writes that type as frames
     * @param <T> the type
     * @return this
     */
    public <T> Builder encoder(Class<T> type, ZmtpEncoder<? super T> encoder) {
      this.encoderType = Objects.requireNonNull(type);
      this.encoder = Objects.requireNonNull(encoder);
      return this;
    }

    /** @param factory makes the decoder of each codec (default: {@link ZmtpMessageDecoder}) @return this */
    public Builder decoder(Supplier<? extends ZmtpDecoder> factory) {
      this.decoder = Objects.requireNonNull(factory);
      return this;
    }

    /** @return a new codec for one channel */
    public ZmtpCodec build() {
      if (socketType == null) {
        throw new IllegalStateException("socketType is required");
      }
      return new ZmtpCodec(this);
    }
  }
}
