package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.oxmq.netty.CodecPipelineTest.Side;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** ZMTP 3.1 heartbeats (RFC 37 PING/PONG) between two codecs, with time frozen. */
class HeartbeatTest {
  private static ZmtpCodec.Builder dealer() {
    return ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER);
  }

  private static void tick(Side s, long ms) {
    s.ch.advanceTimeBy(ms, TimeUnit.MILLISECONDS);
    s.ch.runScheduledPendingTasks();
  }

  /** Drops what {@code s} has written: a peer that hears nothing more from it. */
  private static int drop(Side s) {
    int n = 0;
    for (ByteBuf b; (b = s.ch.readOutbound()) != null; n++) {
      b.release();
    }
    return n;
  }

  @Test
  void aPeerThatAnswersStaysConnected() {
    Side a = new Side(dealer().heartbeatInterval(Duration.ofSeconds(1))
        .heartbeatTimeout(Duration.ofSeconds(3)).build());
    Side b = new Side(dealer().build());
    a.ch.freezeTime();
    CodecPipelineTest.pump(a, b);
    for (int i = 0; i < 10; i++) {
      tick(a, 1000); // a PING goes out
      CodecPipelineTest.pump(a, b); // b answers PONG
    }
    assertTrue(a.ch.isOpen());
    assertNull(a.rec.error.getNow(null));
    assertTrue(a.rec.events.isEmpty(), "PING and PONG stay inside the codec");
  }

  @Test
  void aSilentPeerIsDroppedAfterTheTimeout() {
    Side a = new Side(dealer().heartbeatInterval(Duration.ofSeconds(1))
        .heartbeatTimeout(Duration.ofSeconds(3)).build());
    Side b = new Side(dealer().build());
    a.ch.freezeTime();
    CodecPipelineTest.pump(a, b);
    tick(a, 1000);
    assertEquals(1, drop(a), "one PING written");
    tick(a, 2900);
    assertTrue(a.ch.isOpen(), "within the timeout of the first PING");
    tick(a, 200);
    assertFalse(a.ch.isOpen());
    assertEquals("HeartbeatTimeout", a.rec.errorKind());
  }

  @Test
  void thePeersTtlIsHonoured() {
    Side a = new Side(dealer().heartbeatInterval(Duration.ofSeconds(1))
        .heartbeatTtl(Duration.ofMillis(2500)).build());
    Side b = new Side(dealer().build()); // no heartbeats of its own
    b.ch.freezeTime();
    a.ch.freezeTime();
    CodecPipelineTest.pump(a, b);
    tick(a, 1000);
    CodecPipelineTest.pump(a, b); // b reads a PING with TTL 2.5 s
    tick(b, 2400);
    assertTrue(b.ch.isOpen());
    tick(b, 200);
    assertFalse(b.ch.isOpen(), "nothing from a within its PING's TTL");
    assertEquals("HeartbeatTimeout", b.rec.errorKind());
  }

  @Test
  void olderRevisionsAreNotHeartbeated() {
    Side a = new Side(dealer().heartbeatInterval(Duration.ofSeconds(1)).build());
    Side b = new Side(dealer().protocol(ZmtpProtocol.ZMTP30).build());
    a.ch.freezeTime();
    CodecPipelineTest.pump(a, b);
    assertEquals(ZmtpProtocol.ZMTP30, a.rec.handshake.getNow(null).protocol());
    tick(a, 10_000);
    assertEquals(0, drop(a));
    assertTrue(a.ch.isOpen());
  }

  @Test
  void negativeDurationsAreRefused() {
    assertThrows(IllegalArgumentException.class,
        () -> dealer().heartbeatInterval(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class,
        () -> dealer().heartbeatTimeout(Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> dealer().heartbeatTtl(Duration.ofMillis(-1)));
  }
}
