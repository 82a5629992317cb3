package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A handshake that does not complete within the codec's limit closes the channel. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HandshakeTimeoutTest {
  private static ZmtpCodec codec(Duration limit) {
    return ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).handshakeTimeout(limit).build();
  }

  @Test
  void aSilentPeerIsDroppedWhenTheLimitPasses() {
    Recorder rec = new Recorder();
    EmbeddedChannel ch = new EmbeddedChannel(codec(Duration.ofSeconds(5)), rec);
    ch.freezeTime();
    ch.advanceTimeBy(4900, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
    assertTrue(ch.isOpen(), "still within the limit");
    ch.advanceTimeBy(200, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
    assertFalse(ch.isOpen());
    assertEquals("HandshakeTimeout", ((ZmtpException) rec.error.getNow(null)).kind());
    assertFalse(rec.handshake.isDone());
  }

  @Test
  void aCompletedHandshakeIsNotTimed() {
    CodecPipelineTest.Side a = new CodecPipelineTest.Side(codec(Duration.ofSeconds(1)));
    CodecPipelineTest.Side b = new CodecPipelineTest.Side(codec(Duration.ofSeconds(1)));
    a.ch.freezeTime();
    CodecPipelineTest.pump(a, b);
    assertTrue(a.rec.handshake.isDone());
    a.ch.advanceTimeBy(10, TimeUnit.SECONDS);
    a.ch.runScheduledPendingTasks();
    assertTrue(a.ch.isOpen());
    assertNull(a.rec.error.getNow(null));
  }

  @Test
  void zeroWaitsForeverAndNegativeIsRefused() {
    Recorder rec = new Recorder();
    EmbeddedChannel ch = new EmbeddedChannel(codec(Duration.ZERO), rec);
    ch.freezeTime();
    ch.advanceTimeBy(1, TimeUnit.DAYS);
    ch.runScheduledPendingTasks();
    assertTrue(ch.isOpen());
    assertThrows(IllegalArgumentException.class,
        () -> ZmtpCodec.builder().handshakeTimeout(Duration.ofMillis(-1)));
  }

  /** Over TCP: a client that connects and sends nothing sees our greeting, then end of stream. */
  @Test
  void overTcpTheListenerClosesASilentConnection() throws Exception {
    NioEventLoopGroup group = new NioEventLoopGroup(1);
    try {
      CompletableFuture<Throwable> error = new CompletableFuture<>();
      Channel listener = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
          .childHandler(new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
              Recorder rec = new Recorder();
              rec.error.whenComplete((t, x) -> error.complete(t));
              ch.pipeline().addLast(codec(Duration.ofMillis(300)), rec);
            }
          }).bind("127.0.0.1", 0).sync().channel();
      int port = ((InetSocketAddress) listener.localAddress()).getPort();
      try (Socket s = new Socket("127.0.0.1", port)) {
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        byte[] buf = new byte[256];
        int total = 0;
        for (int n; (n = in.read(buf)) > 0; ) {
          total += n;
        }
        assertTrue(total >= 10, "the listener's greeting came first, " + total + " bytes");
      }
      Throwable t = error.get(10, TimeUnit.SECONDS);
      assertEquals("HandshakeTimeout", ((ZmtpException) t).kind());
      listener.close().sync();
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }
}
