package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * ZMTP 1.0/2.0 cases beside the shared table ({@link GoldenVectorsTest} checks every row of
 * crates/zmtp/tests/vectors/index.md, the 1.0/2.0 rows included): truncated frames, multi-frame
 * sequences, unknown socket-type bytes and the handshake pairs, written from RFC 13/15 here.
 */
class LegacyVectorsInlineTest {
  private static byte[] hex(String h) {
    return HexFormat.of().parseHex(h.replace(" ", ""));
  }

  private static byte[] cat(byte[]... parts) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      o.writeBytes(p);
    }
    return o.toByteArray();
  }

  private static byte[] rep(int n, char c) {
    byte[] b = new byte[n];
    java.util.Arrays.fill(b, (byte) c);
    return b;
  }

  private static void check(String kind, String expect, byte[] bytes) {
    assertEquals(expect, VectorCheck.run(kind, bytes), kind + " " + HexFormat.of().formatHex(bytes));
  }

  @Test
  void frames10() {
    check("frames:1.0", "valid", hex("01 00"));
    check("frames:1.0", "valid", hex("04 00 61 62 63"));
    check("frames:1.0", "valid", hex("06 01 68 65 6c 6c 6f"));
    byte[] long300 = cat(hex("ff 00 00 00 00 00 00 01 2d 00"), rep(300, 'a'));
    check("frames:1.0", "valid", long300);
    check("frames:1.0/max=299", "error:TooLarge", long300);
    check("frames:1.0", "valid", cat(hex("fe 01"), rep(253, 'b')));
    check("frames:1.0", "valid", cat(hex("ff 00 00 00 00 00 00 00 ff 00"), rep(254, 'b')));
    check("frames:1.0", "error:ZeroLength", hex("00"));
    check("frames:1.0", "error:ReservedFlags", hex("01 02"));
    check("frames:1.0", "incomplete", hex("06 01 68 65"));
  }

  @Test
  void frames20() {
    check("frames:2.0", "valid", hex("00 03 61 62 63"));
    check("frames:2.0", "valid", hex("01 05 68 65 6c 6c 6f"));
    check("frames:2.0", "valid", cat(hex("02 00 00 00 00 00 00 01 2c"), rep(300, 'a')));
    check("frames:2.0", "valid", hex("01 01 61 01 00 00 01 63"));
    check("frames:2.0", "error:ReservedFlags", hex("04 00"));
    check("frames:2.0/max=299", "error:TooLarge", hex("02 00 00 00 00 00 00 01 2c"));
    check("frames:2.0/max=2", "error:TooLarge", hex("00 03 61 62 63"));
    check("frames:2.0/max=3", "valid", hex("00 03 61 62 63"));
  }

  @Test
  void greetings20() {
    check("greeting:2.0", "valid", hex("ff 00 00 00 00 00 00 00 01 7f 01 05"));
    check("greeting:2.0", "valid", hex("ff 00 00 00 00 00 00 00 01 7f 01 08"));
    check("greeting:2.0", "valid", hex("ff 00 00 00 00 00 00 00 01 7f 01 01"));
    check("greeting:2.0", "error:UnknownSocketType", hex("ff 00 00 00 00 00 00 00 01 7f 01 2a"));
  }

  @Test
  void legacyHandshakes() {
    byte[] pub20 = hex("ff 00 00 00 00 00 00 00 01 7f 01 01");
    check("handshake:SUB", "incomplete", pub20);
    check("handshake:DEALER", "error:IncompatibleSocketType", pub20);
    check("handshake:DEALER", "complete", hex("01 00"));
    byte[] push20 = hex("ff 00 00 00 00 00 00 00 01 7f 01 08");
    check("handshake:PUSH", "error:IncompatibleSocketType", push20);
    check("handshake:PULL", "incomplete", push20);
    byte[] dealerAbc = cat(hex("ff 00 00 00 00 00 00 00 01 7f 01 05"), hex("00 03 61 62 63"));
    check("handshake:ROUTER", "complete", dealerAbc);
    check("handshake:REP", "complete", dealerAbc);
    check("handshake:PUB", "error:IncompatibleSocketType", dealerAbc);
    check("handshake:CLIENT", "error:LegacySocketType", hex("ff 00 00 00 00 00 00 00 01 7f 01 05"));
    check("handshake:ROUTER", "complete", hex("04 00 61 62 63"));
    check("handshake:ROUTER", "complete",
        hex("ff 00 00 00 00 00 00 00 01 7f 00 05 04 00 61 62 63"));
    check("handshake:ROUTER", "error:IdentityTooLong", cat(
        hex("ff 00 00 00 00 00 00 00 01 7f 01 05 02 00 00 00 00 00 00 01 00"), rep(256, 'i')));
  }

  /** A 1.0 peer's long-form identity frame (first byte 0xFF, byte 9 without bit 0) is 1.0 too. */
  @Test
  void longIdentityFrameOf10PeerIsNotASignature() {
    ZmtpHandshaker hs = new ZmtpHandshaker(ZmtpSocketType.ROUTER, new byte[0],
        ZmtpProtocol.ZMTP31, false, 1 << 20);
    io.netty.buffer.ByteBuf out = io.netty.buffer.Unpooled.buffer();
    hs.start(out);
    assertEquals(true, hs.feed(io.netty.buffer.Unpooled.wrappedBuffer(
        hex("ff 00 00 00 00 00 00 00 04 00 61 62 63")), out));
    assertEquals(ZmtpProtocol.ZMTP10, hs.negotiated());
    assertEquals("abc", new String(hs.peerIdentity(), java.nio.charset.StandardCharsets.US_ASCII));
    // we answered with the body of our own (empty) identity frame after the signature: nothing
    assertEquals(10, out.readableBytes());

    ZmtpHandshaker tooLong = new ZmtpHandshaker(ZmtpSocketType.ROUTER, new byte[0],
        ZmtpProtocol.ZMTP31, false, 1 << 20);
    tooLong.start(io.netty.buffer.Unpooled.buffer());
    ZmtpException e = assertThrows(ZmtpException.class, () -> tooLong.feed(
        io.netty.buffer.Unpooled.wrappedBuffer(cat(hex("ff 00 00 00 00 00 00 01 2d 00"),
            rep(300, 'x'))), io.netty.buffer.Unpooled.buffer()));
    assertEquals("IdentityTooLong", e.kind());
    assertEquals(ZmtpProtocol.ZMTP10, tooLong.negotiated());
  }

  @Test
  void unknownKindFails() {
    assertThrows(VectorCheck.UnknownKind.class, () -> VectorCheck.run("frames:4.0", new byte[0]));
    assertThrows(VectorCheck.UnknownKind.class, () -> VectorCheck.run("noise", new byte[0]));
  }
}
