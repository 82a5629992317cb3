package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.oxmq.netty.CodecPipelineTest.Side;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The PLAIN mechanism between two codecs, and the ways it is refused. */
class PlainTest {
  private static final ZmtpPlainAuthenticator ADMIN =
      (u, p) -> u.equals("admin") && p.equals("secret");

  private static ZmtpCodec.Builder dealer() {
    return ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).identity("d1");
  }

  private static ZmtpCodec.Builder router() {
    return ZmtpCodec.builder().socketType(ZmtpSocketType.ROUTER);
  }

  @ParameterizedTest
  @EnumSource(value = ZmtpProtocol.class, names = {"ZMTP30", "ZMTP31"})
  void aClientWithTheRightPasswordGetsThrough(ZmtpProtocol p) {
    Side client = new Side(dealer().protocol(p).plainClient("admin", "secret").build());
    Side server = new Side(router().plainServer(ADMIN).build());
    client.ch.writeAndFlush(ZmtpMessage.fromUtf8("hello"));
    CodecPipelineTest.pump(client, server);
    ZmtpHandshakeSuccess c = client.rec.handshake.getNow(null);
    ZmtpHandshakeSuccess s = server.rec.handshake.getNow(null);
    assertEquals("PLAIN", c.mechanism());
    assertEquals("PLAIN", s.mechanism());
    assertEquals(p, s.protocol());
    assertEquals("admin", s.userId());
    assertEquals("", c.userId());
    assertEquals(ZmtpSocketType.DEALER, s.peerSocketType());
    assertEquals("d1", new String(s.peerIdentity(), StandardCharsets.UTF_8));
    assertEquals(ZmtpSocketType.ROUTER, c.peerSocketType());
    ZmtpMessage m = (ZmtpMessage) server.rec.reads.poll();
    assertEquals(List.of("hello"), InteropTest.strings(m));
    server.ch.writeAndFlush(ZmtpMessage.fromUtf8("back"));
    CodecPipelineTest.pump(client, server);
    assertEquals(List.of("back"), InteropTest.strings((ZmtpMessage) client.rec.reads.poll()));
  }

  @Test
  void aWrongPasswordIsRefusedWithAnError() {
    Side client = new Side(dealer().plainClient("admin", "guess").build());
    Side server = new Side(router().plainServer(ADMIN).build());
    client.ch.writeAndFlush(ZmtpMessage.fromUtf8("held"));
    CodecPipelineTest.pump(client, server);
    assertEquals("AuthenticationFailed", server.rec.errorKind());
    assertFalse(server.ch.isOpen());
    assertEquals("PeerError", client.rec.errorKind());
    assertTrue(client.rec.error.getNow(null).getMessage().contains(ZmtpHandshaker.PLAIN_REFUSED));
    assertFalse(client.ch.isOpen());
    assertFalse(server.rec.handshake.isDone());
    assertTrue(server.rec.reads.isEmpty());
  }

  @Test
  void anAuthenticatorThatThrowsRefuses() {
    AtomicInteger calls = new AtomicInteger();
    Side client = new Side(dealer().plainClient("admin", "secret").build());
    Side server = new Side(router().plainServer((u, p) -> {
      calls.incrementAndGet();
      throw new IllegalStateException("directory down");
    }).build());
    CodecPipelineTest.pump(client, server);
    assertEquals(1, calls.get());
    assertEquals("AuthenticationFailed", server.rec.errorKind());
    assertInstanceOf(IllegalStateException.class, server.rec.error.getNow(null).getCause());
    assertEquals("PeerError", client.rec.errorKind());
  }

  @Test
  void plainAgainstNullIsAMechanismMismatch() {
    Side client = new Side(dealer().plainClient("admin", "secret").build());
    Side server = new Side(router().build());
    CodecPipelineTest.pump(client, server);
    assertEquals("MechanismMismatch", client.rec.errorKind());
    assertEquals("MechanismMismatch", server.rec.errorKind());
  }

  @Test
  void twoClientsFailOnEachOthersHelloAndTwoServersTimeOut() {
    Side a = new Side(dealer().plainClient("admin", "secret").build());
    Side b = new Side(router().plainClient("admin", "secret").build());
    CodecPipelineTest.pump(a, b);
    assertEquals("UnexpectedCommand", a.rec.errorKind());
    assertEquals("UnexpectedCommand", b.rec.errorKind());
    Side c = new Side(dealer().plainServer(ADMIN).handshakeTimeout(Duration.ofSeconds(1)).build());
    Side d = new Side(router().plainServer(ADMIN).build());
    c.ch.freezeTime();
    CodecPipelineTest.pump(c, d);
    assertTrue(c.ch.isOpen());
    c.ch.advanceTimeBy(2, TimeUnit.SECONDS);
    c.ch.runScheduledPendingTasks();
    assertEquals("HandshakeTimeout", c.rec.errorKind());
  }

  @ParameterizedTest
  @EnumSource(value = ZmtpProtocol.class, names = {"ZMTP10", "ZMTP20"})
  void aLegacyPeerIsRefused(ZmtpProtocol legacy) {
    Side server = new Side(router().plainServer(ADMIN).build());
    Side old = new Side(dealer().protocol(legacy).build());
    CodecPipelineTest.pump(server, old);
    assertEquals("LegacySecurity", server.rec.errorKind());
    assertFalse(server.ch.isOpen());
  }

  @Test
  void aMalformedHelloCloses() {
    Side server = new Side(router().plainServer(ADMIN).build());
    // a PLAIN client's greeting, then a HELLO whose password length runs past its end
    ByteBuf f = Unpooled.buffer();
    f.writeByte(0xFF).writeLong(1).writeByte(0x7F).writeByte(3).writeByte(1);
    f.writeBytes("PLAIN".getBytes(StandardCharsets.US_ASCII)).writeZero(15);
    f.writeByte(0).writeZero(31);
    byte[] body = {5, 'H', 'E', 'L', 'L', 'O', 1, 'a', 9, 'x'};
    f.writeByte(0x04).writeByte(body.length).writeBytes(body);
    server.ch.writeInbound(f);
    assertEquals("MalformedCommand", server.rec.errorKind());
    assertFalse(server.ch.isOpen());
  }

  @Test
  void libzmqsMisspelledErrorIsAnError() {
    Side client = new Side(dealer().plainClient("admin", "guess").build());
    client.ch.readOutbound(); // our signature
    ByteBuf f = Unpooled.buffer();
    f.writeByte(0xFF).writeLong(1).writeByte(0x7F).writeByte(3).writeByte(0);
    f.writeBytes("PLAIN".getBytes(StandardCharsets.US_ASCII)).writeZero(15);
    f.writeByte(0).writeZero(31); // libzmq 4.3 sends as-server 0 as a PLAIN server too
    // what libzmq 4.3.5 sends for ZAP status 400, byte for byte
    f.writeBytes(new byte[] {0x04, 0x09, 0x5E, 'R', 'R', 'O', 'R', 0x03, '4', '0', '0'});
    client.ch.writeInbound(f);
    assertEquals("PeerError", client.rec.errorKind());
    assertTrue(client.rec.error.getNow(null).getMessage().endsWith("400"));
    assertFalse(client.ch.isOpen());
  }

  @Test
  void badConfigurationsAreRefusedWhenBuilt() {
    assertThrows(IllegalArgumentException.class,
        () -> dealer().protocol(ZmtpProtocol.ZMTP20).plainClient("a", "b").build());
    assertThrows(IllegalArgumentException.class,
        () -> dealer().plainClient("x".repeat(256), "b"));
    assertThrows(NullPointerException.class, () -> router().plainServer(null));
  }
}
