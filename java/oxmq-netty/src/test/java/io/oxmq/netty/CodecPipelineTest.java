package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Two codecs connected back to back through embedded channels: every revision pair. */
class CodecPipelineTest {
  static final class Side {
    final Recorder rec = new Recorder();
    final EmbeddedChannel ch;

    Side(ZmtpCodec codec) {
      ch = new EmbeddedChannel(codec, rec);
    }
  }

  /** Moves bytes both ways until neither side has anything to send. */
  static void pump(Side a, Side b) {
    for (int i = 0; i < 100; i++) {
      boolean moved = move(a, b) | move(b, a);
      if (!moved) {
        return;
      }
    }
    throw new AssertionError("the sides never went quiet");
  }

  private static boolean move(Side from, Side to) {
    boolean moved = false;
    ByteBuf b;
    while ((b = from.ch.readOutbound()) != null) {
      moved = true;
      if (to.ch.isOpen()) {
        to.ch.writeInbound(b);
      } else {
        b.release();
      }
    }
    return moved;
  }

  /**
   * Flushes {@code from}, and feeds all it wrote to {@code to} in fresh pooled buffers of the
   * sizes {@code chunk} gives (a read may end anywhere), keeping a reference on each.
   *
   * @return the buffers fed, each holding the test's reference
   */
  static List<ByteBuf> flushInPieces(Side from, Side to, java.util.function.IntSupplier chunk) {
    from.ch.flush();
    ByteBuf all = Unpooled.buffer();
    ByteBuf out;
    while ((out = from.ch.readOutbound()) != null) {
      all.writeBytes(out);
      out.release();
    }
    List<ByteBuf> inputs = new java.util.ArrayList<>();
    while (all.isReadable()) {
      int k = Math.min(all.readableBytes(), chunk.getAsInt());
      ByteBuf piece = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(k);
      piece.writeBytes(all, k);
      inputs.add(piece);
      to.ch.writeInbound(piece.retain()); // our reference checks that it is freed later
    }
    all.release();
    return inputs;
  }

  /** Asserts that the codec let go of every buffer {@link #flushInPieces} fed it. */
  static void assertAllFreed(List<ByteBuf> inputs) {
    for (ByteBuf piece : inputs) {
      assertEquals(1, piece.refCnt(), "only the test's reference is left");
      assertTrue(piece.release());
    }
  }

  static ZmtpCodec codec(ZmtpSocketType t, ZmtpProtocol p, String id) {
    return ZmtpCodec.builder().socketType(t).protocol(p).identity(id).build();
  }

  @ParameterizedTest
  @CsvSource({
    "ZMTP31, ZMTP31, ZMTP31", "ZMTP31, ZMTP30, ZMTP30", "ZMTP30, ZMTP31, ZMTP30",
    "ZMTP31, ZMTP20, ZMTP20", "ZMTP20, ZMTP31, ZMTP20", "ZMTP20, ZMTP20, ZMTP20",
    "ZMTP31, ZMTP10, ZMTP10", "ZMTP10, ZMTP31, ZMTP10", "ZMTP10, ZMTP10, ZMTP10",
    "ZMTP20, ZMTP10, ZMTP10", "ZMTP10, ZMTP20, ZMTP10", "ZMTP30, ZMTP10, ZMTP10"
  })
  void dealerRouterEveryRevisionPair(ZmtpProtocol pa, ZmtpProtocol pb, ZmtpProtocol expect)
      throws Exception {
    Side dealer = new Side(codec(ZmtpSocketType.DEALER, pa, "dealer-1"));
    Side router = new Side(codec(ZmtpSocketType.ROUTER, pb, "router-1"));
    // written before the handshake: held, then sent
    dealer.ch.writeAndFlush(ZmtpMessage.fromUtf8("early", ""));
    pump(dealer, router);
    ZmtpHandshakeSuccess hd = dealer.rec.handshake.getNow(null);
    ZmtpHandshakeSuccess hr = router.rec.handshake.getNow(null);
    assertEquals(expect, hd.protocol());
    assertEquals(expect, hr.protocol());
    assertEquals("router-1", new String(hd.peerIdentity(), StandardCharsets.UTF_8));
    assertEquals("dealer-1", new String(hr.peerIdentity(), StandardCharsets.UTF_8));
    if (expect == ZmtpProtocol.ZMTP10) {
      assertNull(hd.peerSocketType());
    } else {
      assertEquals(ZmtpSocketType.ROUTER, hd.peerSocketType());
      assertEquals(ZmtpSocketType.DEALER, hr.peerSocketType());
    }
    ZmtpMessage early = (ZmtpMessage) router.rec.reads.poll();
    assertEquals(2, early.size());
    assertEquals("early", early.frameAsString(0));
    early.release();

    byte[] big = new byte[100_000];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) i;
    }
    router.ch.writeAndFlush(ZmtpMessage.wrap(Unpooled.copiedBuffer("a", StandardCharsets.UTF_8),
        Unpooled.wrappedBuffer(big), Unpooled.EMPTY_BUFFER, Unpooled.copiedBuffer("z".repeat(300),
            StandardCharsets.UTF_8)));
    pump(dealer, router);
    ZmtpMessage m = (ZmtpMessage) dealer.rec.reads.poll();
    assertEquals(4, m.size());
    assertEquals("a", m.frameAsString(0));
    byte[] got = new byte[m.frame(1).readableBytes()];
    m.frame(1).getBytes(m.frame(1).readerIndex(), got);
    assertArrayEquals(big, got);
    assertEquals(0, m.frame(2).readableBytes());
    assertEquals("z".repeat(300), m.frameAsString(3));
    assertTrue(m.release());
    assertTrue(dealer.rec.reads.isEmpty());
    assertFalse(dealer.rec.error.isDone());
    assertFalse(router.rec.error.isDone());
  }

  @ParameterizedTest
  @CsvSource({"ZMTP31", "ZMTP30", "ZMTP20", "ZMTP10"})
  void subscriptions(ZmtpProtocol p) {
    Side sub = new Side(codec(ZmtpSocketType.SUB, p, ""));
    Side pub = new Side(codec(ZmtpSocketType.PUB, ZmtpProtocol.ZMTP31, ""));
    sub.ch.writeAndFlush(ZmtpSubscription.subscribe("weather"));
    sub.ch.writeAndFlush(ZmtpSubscription.cancel("news"));
    pump(sub, pub);
    assertEquals(p, pub.rec.handshake.getNow(null).protocol());
    if (p == ZmtpProtocol.ZMTP10) {
      ZmtpSubscription all = (ZmtpSubscription) pub.rec.reads.poll();
      assertTrue(all.isSubscribe());
      assertEquals(0, all.topic().length);
    } else {
      ZmtpSubscription s = (ZmtpSubscription) pub.rec.reads.poll();
      assertTrue(s.isSubscribe());
      assertEquals("weather", new String(s.topic(), StandardCharsets.UTF_8));
      ZmtpSubscription c = (ZmtpSubscription) pub.rec.reads.poll();
      assertFalse(c.isSubscribe());
      assertEquals("news", new String(c.topic(), StandardCharsets.UTF_8));
    }
    assertNull(pub.rec.reads.poll());
    // a published message whose first byte is 0x01 is a message on the SUB side
    pub.ch.writeAndFlush(ZmtpMessage.wrap(Unpooled.wrappedBuffer(new byte[] {1, 'x'})));
    pump(sub, pub);
    ZmtpMessage m = (ZmtpMessage) sub.rec.reads.poll();
    assertEquals(2, m.frame(0).readableBytes());
    m.release();
  }

  @Test
  void frameOverLimitClosesBeforeAllocating() {
    Side a = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.PULL).maxFrameSize(1000).build());
    Side b = new Side(codec(ZmtpSocketType.PUSH, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    assertTrue(a.rec.handshake.isDone());
    // a long frame announcing 2^40 bytes, with none of them sent
    a.ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {2, 0, 0, 1, 0, 0, 0, 0, 0}));
    Throwable t = a.rec.error.getNow(null);
    assertInstanceOf(ZmtpException.class, t);
    assertEquals("TooLarge", ((ZmtpException) t).kind());
    assertFalse(a.ch.isOpen());
    assertNull(a.rec.reads.poll());
  }

  /** A short frame over a small limit is refused like a long one. */
  @Test
  void shortFrameOverLimitCloses() {
    Side a = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.PULL).maxFrameSize(100)
        .build());
    Side b = new Side(codec(ZmtpSocketType.PUSH, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    ByteBuf ok = Unpooled.buffer().writeByte(0).writeByte(100).writeZero(100);
    ByteBuf over = Unpooled.buffer().writeByte(0).writeByte(101).writeZero(101);
    a.ch.writeInbound(Unpooled.wrappedBuffer(ok, over));
    ZmtpMessage m = (ZmtpMessage) a.rec.reads.poll();
    assertEquals(100, m.frame(0).readableBytes());
    m.release();
    Throwable t = a.rec.error.getNow(null);
    assertInstanceOf(ZmtpException.class, t);
    assertEquals("TooLarge", ((ZmtpException) t).kind());
    assertFalse(a.ch.isOpen());
    assertNull(a.rec.reads.poll());
  }

  @Test
  void garbageGreetingCloses() {
    Side a = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    byte[] g = new byte[64];
    g[0] = (byte) 0xFF;
    g[9] = 0x7F;
    g[10] = 3;
    System.arraycopy("CURVE".getBytes(StandardCharsets.US_ASCII), 0, g, 12, 5);
    a.ch.writeInbound(Unpooled.wrappedBuffer(g));
    assertEquals("MechanismMismatch", ((ZmtpException) a.rec.error.getNow(null)).kind());
    assertFalse(a.ch.isOpen());
  }

  @Test
  void incompatibleSocketTypeCloses() {
    Side a = new Side(codec(ZmtpSocketType.PUSH, ZmtpProtocol.ZMTP31, ""));
    Side b = new Side(codec(ZmtpSocketType.PUSH, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    assertEquals("IncompatibleSocketType", ((ZmtpException) a.rec.error.getNow(null)).kind());
    assertFalse(a.ch.isOpen());
    assertFalse(a.rec.handshake.isDone());
  }

  @Test
  void pingIsAnsweredWithPong() {
    Side a = new Side(codec(ZmtpSocketType.PAIR, ZmtpProtocol.ZMTP31, ""));
    Side b = new Side(codec(ZmtpSocketType.PAIR, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    ByteBuf ping = Unpooled.buffer();
    ZmtpCommand.ping(10, new byte[] {'c', 'x'}).writeFrame(ping);
    a.ch.writeInbound(ping);
    a.ch.flushOutbound();
    ByteBuf out = a.ch.readOutbound();
    ByteBuf expect = Unpooled.buffer();
    ZmtpCommand.pong(new byte[] {'c', 'x'}).writeFrame(expect);
    assertEquals(expect, out);
    out.release();
  }

  /** An application type written and read with no ZmtpMessage in between. */
  record Req(long id, String path) {}

  static final class ReqDecoder implements ZmtpDecoder {
    long id;

    @Override
    public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
      if (more) {
        id = body.readLong();
      } else {
        out.add(new Req(id, body.toString(StandardCharsets.US_ASCII)));
      }
    }
  }

  @Test
  void customEncoderAndDecoderAndBatching() {
    ZmtpEncoder<Req> enc = (r, w) -> {
      w.frame(8, true).writeLong(r.id());
      w.frame(r.path().length(), false).writeCharSequence(r.path(), StandardCharsets.US_ASCII);
    };
    Side a = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER)
        .encoder(Req.class, enc).build());
    Side b = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER)
        .decoder(ReqDecoder::new).build());
    pump(a, b);
    for (int i = 0; i < 100; i++) {
      a.ch.write(new Req(i, "/r/" + i));
    }
    a.ch.flush();
    // one buffer for the hundred messages
    ByteBuf batch = a.ch.readOutbound();
    assertNull(a.ch.readOutbound());
    b.ch.writeInbound(batch);
    for (int i = 0; i < 100; i++) {
      assertEquals(new Req(i, "/r/" + i), b.rec.reads.poll());
    }
    // an encoder that writes the wrong size fails the write, not the channel
    ZmtpEncoder<Req> bad = (r, w) -> w.frame(8, false).writeInt(1);
    Side c = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER)
        .encoder(Req.class, bad).build());
    Side d = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    pump(c, d);
    assertFalse(c.ch.writeAndFlush(new Req(1, "x")).isSuccess());
  }

  /**
   * A write that fails to encode takes back what it had written: the messages around it, in
   * the same batch and flush, arrive whole and in order, and only its own future fails. Covers
   * an application encoder that writes too little, too much, throws halfway, ends on MORE, or
   * writes a frame after the last one, and a message whose second frame was freed behind a
   * first large enough to be held by reference.
   */
  @ParameterizedTest
  @CsvSource({"ZMTP31", "ZMTP20", "ZMTP10"})
  void failedEncodesLeaveNothingInTheStream(ZmtpProtocol p) {
    ZmtpEncoder<Req> enc = (r, w) -> {
      ByteBuf id = w.frame(8, true);
      switch (r.path()) {
        case "short": id.writeInt(1); break;
        case "long": id.writeLong(r.id()).writeByte(0); break;
        default: id.writeLong(r.id());
      }
      if (r.path().equals("throw")) {
        throw new IllegalArgumentException("no path");
      }
      if (r.path().equals("negative")) {
        w.frame(-1, false);
      }
      w.frame(r.path().length(), r.path().equals("more"))
          .writeCharSequence(r.path(), StandardCharsets.US_ASCII);
      if (r.path().equals("after")) {
        w.frame(1, false).writeByte(0); // a frame after the last one
      }
    };
    Side a = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).protocol(p)
        .encoder(Req.class, enc).build());
    Side b = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).protocol(p)
        .decoder(ReqDecoder::new).build());
    pump(a, b);
    List<io.netty.channel.ChannelFuture> good = new java.util.ArrayList<>();
    List<io.netty.channel.ChannelFuture> bad = new java.util.ArrayList<>();
    String[] kinds = {"short", "long", "throw", "more", "negative", "after"};
    // paths around the short/long header boundary (255 and 256 bytes) and well past it
    int[] pad = {0, 0, 0, 249, 250, 1000};
    for (int i = 0; i < 40; i++) {
      good.add(a.ch.write(new Req(i, path(i, pad[i % pad.length]))));
      bad.add(a.ch.write(new Req(-1, kinds[i % kinds.length])));
    }
    ByteBuf big = Unpooled.buffer(9000).writeZero(9000);
    ByteBuf freed = Unpooled.copyLong(7);
    freed.release();
    bad.add(a.ch.write(ZmtpMessage.wrap(big, freed)));
    good.add(a.ch.write(new Req(40, "/ok/40")));
    a.ch.flush();
    pump(a, b);
    for (int i = 0; i < 40; i++) {
      assertEquals(new Req(i, path(i, pad[i % pad.length])), b.rec.reads.poll());
    }
    assertEquals(new Req(40, "/ok/40"), b.rec.reads.poll());
    assertNull(b.rec.reads.poll());
    assertFalse(b.rec.error.isDone(), () -> "peer failed: " + b.rec.error.getNow(null));
    assertTrue(a.ch.isOpen());
    for (io.netty.channel.ChannelFuture f : good) {
      assertTrue(f.isSuccess());
    }
    for (io.netty.channel.ChannelFuture f : bad) {
      assertTrue(f.isDone() && !f.isSuccess());
    }
    assertEquals(0, big.refCnt());
  }

  /** "/ok/" + i, then {@code pad} x's. */
  private static String path(int i, int pad) {
    return "/ok/" + i + "x".repeat(pad);
  }

  /**
   * A stream whose reads end anywhere (in a header, in a body), with every message still held
   * by the application while later reads arrive: each message is intact, and once released,
   * every input buffer is freed.
   */
  @ParameterizedTest
  @CsvSource({"ZMTP31", "ZMTP20", "ZMTP10"})
  void readsSplitAnywhereWithMessagesHeld(ZmtpProtocol p) {
    Side a = new Side(codec(ZmtpSocketType.DEALER, p, ""));
    Side b = new Side(codec(ZmtpSocketType.DEALER, p, ""));
    pump(a, b);
    java.util.Random rnd = new java.util.Random(7);
    int n = 2000;
    for (int i = 0; i < n; i++) {
      // sizes around the short/long frame boundary (255) and the copy limit (8 KiB)
      int len = i % 97 == 0 ? 9000 + i : i % 5 == 0 ? 250 + i % 10 : i % 40;
      byte[] body = new byte[len];
      for (int k = 0; k < len; k++) {
        body[k] = (byte) (i + k);
      }
      a.ch.write(ZmtpMessage.wrap(Unpooled.copyInt(i), Unpooled.wrappedBuffer(body)));
    }
    List<ByteBuf> inputs = flushInPieces(a, b, () -> 1 + rnd.nextInt(rnd.nextBoolean() ? 7 : 3000));
    List<ZmtpMessage> got = new java.util.ArrayList<>();
    Object o;
    while ((o = b.rec.reads.poll()) != null) {
      got.add((ZmtpMessage) o);
    }
    assertEquals(n, got.size());
    for (int i = 0; i < n; i++) {
      ZmtpMessage m = got.get(i);
      assertEquals(2, m.size());
      assertEquals(i, m.frame(0).getInt(m.frame(0).readerIndex()));
      ByteBuf body = m.frame(1);
      int len = i % 97 == 0 ? 9000 + i : i % 5 == 0 ? 250 + i % 10 : i % 40;
      assertEquals(len, body.readableBytes());
      for (int k = 0; k < len; k++) {
        assertEquals((byte) (i + k), body.getByte(body.readerIndex() + k));
      }
      m.release();
    }
    b.ch.finishAndReleaseAll();
    assertAllFreed(inputs);
    assertFalse(b.rec.error.isDone());
  }

  /**
   * An application decoder's frame body: read in place, or kept past the call by
   * {@code retain()}, {@code retainedSlice()} or {@code retainedDuplicate()}. A kept body keeps
   * its own bytes while later frames and reads go by (the codec hands the next frame a fresh
   * body then), and once the kept ones are released every input buffer is freed.
   */
  @Test
  void decoderBodiesKeptOrNot() {
    List<ByteBuf> kept = new java.util.ArrayList<>();
    List<Integer> keptFrame = new java.util.ArrayList<>();
    List<ByteBuf> read = new java.util.ArrayList<>();
    int[] frameNo = {0};
    ZmtpDecoder keeper = (ctx, body, more, out) -> {
      int f = frameNo[0]++;
      assertEquals(body.readableBytes(), body.capacity());
      switch (f % 4) {
        case 0: kept.add(body.retain()); break;
        case 1: kept.add(body.retainedSlice()); break;
        case 2: kept.add(body.retainedDuplicate()); break;
        default:
          read.add(Unpooled.copiedBuffer(body)); // read in place, not kept
          keptFrame.add(-1);
          return;
      }
      keptFrame.add(f);
    };
    Side a = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    Side b = new Side(ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER)
        .decoder(() -> keeper).build());
    pump(a, b);
    int n = 600;
    for (int i = 0; i < n; i++) {
      byte[] body = new byte[1 + i % 50];
      java.util.Arrays.fill(body, (byte) i);
      a.ch.write(ZmtpMessage.wrap(Unpooled.wrappedBuffer(body)));
    }
    java.util.Random rnd = new java.util.Random(3);
    List<ByteBuf> inputs = flushInPieces(a, b, () -> 1 + rnd.nextInt(400));
    assertEquals(n, frameNo[0]);
    int k = 0;
    int r = 0;
    for (int f = 0; f < n; f++) {
      ByteBuf got = keptFrame.get(f) == f ? kept.get(k++) : read.get(r++);
      assertEquals(1 + f % 50, got.readableBytes(), "frame " + f);
      for (int j = 0; j < got.readableBytes(); j++) {
        assertEquals((byte) f, got.getByte(got.readerIndex() + j), "frame " + f);
      }
    }
    for (ByteBuf x : kept) {
      x.release();
    }
    b.ch.finishAndReleaseAll();
    assertAllFreed(inputs);
    assertFalse(b.rec.error.isDone());
  }

  /**
   * Every write's future completes, successfully, once the batch holding it is written: one
   * written before the handshake, many small ones gathered into one batch, and one whose frame
   * goes by reference; none before the flush.
   */
  @Test
  void everyWriteCompletesOnceItsBatchIsWritten() {
    Side a = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    io.netty.channel.ChannelFuture early = a.ch.write(ZmtpMessage.fromUtf8("early"));
    Side b = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    assertTrue(early.isSuccess());
    List<io.netty.channel.ChannelFuture> writes = new java.util.ArrayList<>();
    for (int i = 0; i < 300; i++) {
      writes.add(a.ch.write(ZmtpMessage.fromUtf8("m" + i)));
    }
    writes.add(a.ch.write(ZmtpMessage.wrap(Unpooled.wrappedBuffer(new byte[20000]))));
    for (io.netty.channel.ChannelFuture f : writes) {
      assertFalse(f.isDone(), "not before the flush");
    }
    a.ch.flush();
    for (io.netty.channel.ChannelFuture f : writes) {
      assertTrue(f.isSuccess());
    }
    pump(a, b);
    assertEquals(302, b.rec.reads.size());
    Object o;
    while ((o = b.rec.reads.poll()) != null) {
      ((ZmtpMessage) o).release();
    }
  }

  /**
   * Received messages written on to another channel, as a proxy does: sent as they arrived
   * where the frame formats agree (a long header on a short frame stays long), re-encoded where
   * they do not (1.0) or where the application changed a frame's readable bytes; a command
   * between a message's frames is not forwarded; a range over the copy limit goes by reference.
   */
  @ParameterizedTest
  @CsvSource({"ZMTP31", "ZMTP20", "ZMTP10"})
  void receivedMessagesForwardedAsTheyArrivedOrReencoded(ZmtpProtocol outP) {
    Side a = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    Side b = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    Side c = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    Side d = new Side(codec(ZmtpSocketType.DEALER, outP, ""));
    pump(c, d);
    byte[] longShort = {0x03, 0, 0, 0, 0, 0, 0, 0, 3, 'a', 'b', 'c'};
    byte[] big = new byte[9000];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 7);
    }
    ByteBuf in = Unpooled.buffer();
    in.writeBytes(new byte[] {1, 2, 'e', '1', 1, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'});
    in.writeBytes(longShort).writeBytes(new byte[] {0, 1, '!'});
    in.writeBytes(new byte[] {1, 7, 's', 'k', 'i', 'p', '-', 'm', 'e', 0, 1, 'z'});
    in.writeBytes(new byte[] {1, 1, 'p'});
    ZmtpCommand.of("PING", new byte[] {0, 0}).writeFrame(in);
    in.writeBytes(new byte[] {0, 1, 'q'});
    in.writeByte(3).writeLong(big.length).writeBytes(big);
    in.writeBytes(new byte[] {0, 4, 't', 'a', 'i', 'l'});
    b.ch.writeInbound(in);
    b.ch.releaseOutbound(); // the PONG
    assertEquals(5, b.rec.reads.size());
    Object o;
    while ((o = b.rec.reads.poll()) != null) {
      ZmtpMessage m = (ZmtpMessage) o;
      if (m.frameAsString(0).equals("skip-me")) {
        m.frame(0).skipBytes(5);
      }
      c.ch.write(m);
    }
    c.ch.flush();
    ByteBuf wire = Unpooled.buffer();
    ByteBuf x;
    while ((x = c.ch.readOutbound()) != null) {
      wire.writeBytes(x);
      x.release();
    }
    boolean sameFormat = outP != ZmtpProtocol.ZMTP10;
    int kept = io.netty.buffer.ByteBufUtil.indexOf(Unpooled.wrappedBuffer(longShort), wire);
    assertEquals(sameFormat, kept >= 0,
        "the long header on a short frame is kept only where the message is sent as it arrived");
    d.ch.writeInbound(wire);
    String[][] expect = {
      {"e1", "", "hello"}, {"abc", "!"}, {"me", "z"}, {"p", "q"}, {null, "tail"}
    };
    for (String[] e : expect) {
      ZmtpMessage m = (ZmtpMessage) d.rec.reads.poll();
      assertEquals(e.length, m.size());
      for (int i = 0; i < e.length; i++) {
        if (e[i] == null) {
          byte[] got = new byte[m.frame(i).readableBytes()];
          m.frame(i).getBytes(m.frame(i).readerIndex(), got);
          assertArrayEquals(big, got);
        } else {
          assertEquals(e[i], m.frameAsString(i));
        }
      }
      m.release();
    }
    assertNull(d.rec.reads.poll());
    assertTrue(d.rec.events.isEmpty(), "no command reached the far side");
    assertFalse(b.rec.error.isDone());
    assertFalse(d.rec.error.isDone());
  }

  /**
   * A channel that closes with a message half received, its frames in two inputs: both inputs
   * are freed, and nothing is delivered.
   */
  @Test
  void channelClosedWithAMessageHalfReceivedFreesItsInputs() {
    Side a = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    Side b = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    pump(a, b);
    ByteBuf first = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer();
    // two frames with MORE, and a third's flags
    first.writeBytes(new byte[] {1, 1, 'x', 1, 1, 'y', 1});
    ByteBuf second = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer();
    second.writeBytes(new byte[] {1, 'z'}); // the rest of the third, MORE again
    b.ch.writeInbound(first.retain());
    b.ch.writeInbound(second.retain());
    assertTrue(b.rec.reads.isEmpty());
    b.ch.finishAndReleaseAll();
    assertEquals(1, first.refCnt(), "only the test's reference is left");
    assertEquals(1, second.refCnt(), "only the test's reference is left");
    assertTrue(first.release());
    assertTrue(second.release());
    assertTrue(b.rec.reads.isEmpty());
  }

  /**
   * An application that closes the channel when the codec hands it a command (a user event) in
   * the middle of an input: each message of the input is delivered once, nothing fails, and the
   * input is freed.
   */
  @Test
  void channelClosedByTheApplicationInTheMiddleOfAnInput() {
    Side a = new Side(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""));
    Recorder rec = new Recorder() {
      @Override
      public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        super.userEventTriggered(ctx, evt);
        if (evt instanceof ZmtpCommand) {
          ctx.close();
        }
      }
    };
    EmbeddedChannel bch = new EmbeddedChannel(codec(ZmtpSocketType.DEALER, ZmtpProtocol.ZMTP31, ""), rec);
    // the handshake, by hand: a's output to b and back
    for (int i = 0; i < 10; i++) {
      ByteBuf x;
      while ((x = a.ch.readOutbound()) != null) {
        bch.writeInbound(x);
      }
      while ((x = bch.readOutbound()) != null) {
        a.ch.writeInbound(x);
      }
    }
    assertTrue(rec.handshake.isDone());
    ByteBuf in = io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer();
    in.writeBytes(new byte[] {0, 1, 'a'});
    ZmtpCommand.of("X-TEST", new byte[] {7}).writeFrame(in);
    for (int i = 0; i < 5; i++) {
      in.writeBytes(new byte[] {0, 1, (byte) ('b' + i)});
    }
    bch.writeInbound(in.retain());
    int messages = 0;
    Object o;
    while ((o = rec.reads.poll()) != null) {
      assertInstanceOf(ZmtpMessage.class, o);
      assertEquals(String.valueOf((char) ('a' + messages)), ((ZmtpMessage) o).frameAsString(0));
      ((ZmtpMessage) o).release();
      messages++;
    }
    assertEquals(6, messages, "each message once");
    assertFalse(rec.error.isDone());
    assertFalse(bch.isOpen());
    assertEquals(1, in.refCnt(), "only the test's reference is left");
    assertTrue(in.release());
  }
}
