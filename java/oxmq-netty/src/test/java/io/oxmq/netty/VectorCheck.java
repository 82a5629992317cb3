package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

/**
 * Reads the bytes of one golden vector the way its kind says and returns the outcome in the
 * vocabulary of the vector table: {@code valid}, {@code complete}, {@code incomplete} or
 * {@code error:Name}. For {@code valid} it also re-encodes what it decoded with the codec's own
 * encoders and fails unless the bytes are identical.
 */
final class VectorCheck {
  private VectorCheck() {}

  /** Thrown for a kind this codec does not read: the test fails rather than skipping. */
  static final class UnknownKind extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnknownKind(String kind) {
      super("unknown vector kind: " + kind);
    }
  }

  static String run(String kind, byte[] bytes) {
    try {
      return dispatch(kind, bytes);
    } catch (ZmtpException e) {
      return "error:" + e.kind();
    }
  }

  private static String dispatch(String kind, byte[] bytes) {
    if (kind.equals("greeting")) {
      return greeting3(bytes);
    }
    if (kind.equals("greeting:2.0")) {
      return greeting2(bytes);
    }
    if (kind.equals("command")) {
      return command(bytes);
    }
    if (kind.startsWith("handshake:")) {
      return handshake(ZmtpSocketType.valueOf(kind.substring("handshake:".length())), bytes);
    }
    if (kind.startsWith("frames")) {
      String rest = kind.substring("frames".length());
      ZmtpProtocol v = ZmtpProtocol.ZMTP31;
      if (rest.startsWith(":1.0")) {
        v = ZmtpProtocol.ZMTP10;
        rest = rest.substring(4);
      } else if (rest.startsWith(":2.0")) {
        v = ZmtpProtocol.ZMTP20;
        rest = rest.substring(4);
      }
      long max = Long.MAX_VALUE;
      if (rest.startsWith("/max=")) {
        max = Long.parseLong(rest.substring(5));
      } else if (!rest.isEmpty()) {
        throw new UnknownKind(kind);
      }
      return frames(v, max, bytes);
    }
    throw new UnknownKind(kind);
  }

  static String frames(ZmtpProtocol v, long max, byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    ByteBuf re = Unpooled.buffer();
    ZmtpWire.Header h = new ZmtpWire.Header();
    while (in.isReadable()) {
      int hl = ZmtpWire.parse(v, in, in.readerIndex(), max, false, h);
      if (hl == 0 || in.readableBytes() - hl < h.length) {
        return "incomplete";
      }
      in.skipBytes(hl);
      ByteBuf body = in.readSlice((int) h.length);
      ZmtpWire.write(v, re, body.readableBytes(), h.more, h.command);
      re.writeBytes(body, body.readerIndex(), body.readableBytes());
    }
    return sameOrFail(bytes, re);
  }

  static String command(byte[] bytes) {
    ByteBuf in = Unpooled.wrappedBuffer(bytes);
    ZmtpWire.Header h = new ZmtpWire.Header();
    int hl = ZmtpWire.parse(ZmtpProtocol.ZMTP31, in, 0, Long.MAX_VALUE, false, h);
    if (hl == 0 || bytes.length - hl < h.length) {
      return "incomplete";
    }
    if (!h.command) {
      throw new AssertionError("not a command frame");
    }
    ZmtpCommand cmd = ZmtpCommand.parse(in.slice(hl, (int) h.length));
    if (hl + h.length != bytes.length) {
      throw new AssertionError("bytes after the command frame");
    }
    ByteBuf re = Unpooled.buffer();
    cmd.writeFrame(re);
    return sameOrFail(bytes, re);
  }

  static String greeting3(byte[] bytes) {
    if (bytes.length < 64) {
      return "incomplete";
    }
    if ((bytes[0] & 0xFF) != 0xFF || (bytes[9] & 1) != 1 || bytes[10] < 3) {
      throw new ZmtpException("BadSignature", "not a 3.x greeting");
    }
    // Re-encode: what a handshaker of the same minor version sends to this greeting.
    ZmtpProtocol v = bytes[11] == 0 ? ZmtpProtocol.ZMTP30 : ZmtpProtocol.ZMTP31;
    ZmtpHandshaker hs = new ZmtpHandshaker(ZmtpSocketType.DEALER, new byte[0], v, bytes[32] == 1,
        1 << 20);
    ByteBuf out = Unpooled.buffer();
    hs.start(out);
    hs.feed(Unpooled.wrappedBuffer(bytes, 0, 11), out);
    if (out.readableBytes() != 64) {
      // the handshaker also wrote its READY only after the 53 remaining greeting bytes
      throw new AssertionError("greeting of " + out.readableBytes() + " bytes");
    }
    // the mechanism must be NULL for the handshaker to accept the rest
    hs.feed(Unpooled.wrappedBuffer(bytes, 11, 53), Unpooled.buffer());
    return sameOrFail(bytes, out);
  }

  static String greeting2(byte[] bytes) {
    if (bytes.length < 12) {
      return "incomplete";
    }
    if ((bytes[0] & 0xFF) != 0xFF || (bytes[9] & 1) != 1 || bytes[10] != 1) {
      throw new ZmtpException("BadSignature", "not a 2.0 greeting");
    }
    ZmtpSocketType type = ZmtpSocketType.fromLegacyCode(bytes[11] & 0xFF);
    ZmtpHandshaker hs = new ZmtpHandshaker(type, new byte[0], ZmtpProtocol.ZMTP20, false, 1 << 20);
    ByteBuf out = Unpooled.buffer();
    hs.start(out);
    hs.feed(Unpooled.wrappedBuffer(bytes, 0, 11), out);
    if (bytes.length != 12) {
      throw new AssertionError("bytes after the greeting");
    }
    return sameOrFail(bytes, out);
  }

  static String handshake(ZmtpSocketType type, byte[] bytes) {
    ZmtpHandshaker hs = new ZmtpHandshaker(type, new byte[0], ZmtpProtocol.ZMTP31, false,
        64L << 20);
    ByteBuf out = Unpooled.buffer();
    hs.start(out);
    return hs.feed(Unpooled.wrappedBuffer(bytes), out) ? "complete" : "incomplete";
  }

  private static String sameOrFail(byte[] expected, ByteBuf actual) {
    byte[] a = ByteBufUtil.getBytes(actual);
    if (!java.util.Arrays.equals(expected, a)) {
      throw new AssertionError("re-encoded bytes differ:\n expected " + ByteBufUtil.hexDump(expected)
          + "\n actual   " + ByteBufUtil.hexDump(a));
    }
    return "valid";
  }
}
