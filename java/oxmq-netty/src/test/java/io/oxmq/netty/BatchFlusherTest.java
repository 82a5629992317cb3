package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** ZmtpBatchFlusher: one flush per loop pass, or at once every maxPending calls on the loop. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BatchFlusherTest {
  private DefaultEventLoopGroup group;
  private Channel server;
  private Channel ch;
  private final AtomicInteger flushes = new AtomicInteger();

  @BeforeEach
  void connect() throws InterruptedException {
    group = new DefaultEventLoopGroup(2);
    LocalAddress addr = new LocalAddress("flusher-" + System.nanoTime());
    server = new ServerBootstrap().group(group).channel(LocalServerChannel.class)
        .childHandler(new ChannelInboundHandlerAdapter()).bind(addr).sync().channel();
    ch = new Bootstrap().group(group).channel(LocalChannel.class)
        .handler(new ChannelOutboundHandlerAdapter() {
          @Override
          public void flush(ChannelHandlerContext ctx) {
            flushes.incrementAndGet();
            ctx.flush();
          }
        }).connect(addr).sync().channel();
    flushes.set(0);
  }

  @AfterEach
  void close() {
    ch.close().syncUninterruptibly();
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Runs a task on the loop and then an empty one, so that what the first scheduled has run. */
  private int onLoop(Runnable r) throws Exception {
    int during = ch.eventLoop().submit(() -> {
      r.run();
      return flushes.get();
    }).get();
    ch.eventLoop().submit(() -> { }).sync();
    return during;
  }

  @Test
  void callsOnTheLoopBecomeOneFlushAfterThePass() throws Exception {
    ZmtpBatchFlusher f = new ZmtpBatchFlusher(ch);
    int during = onLoop(() -> {
      for (int i = 0; i < 255; i++) {
        f.flush();
      }
    });
    assertEquals(0, during, "nothing flushed within the pass");
    assertEquals(1, flushes.get(), "one flush after it");
  }

  @Test
  void theMaxPendingthCallOnTheLoopFlushesAtOnce() throws Exception {
    ZmtpBatchFlusher f = new ZmtpBatchFlusher(ch, 10);
    int during = onLoop(() -> {
      for (int i = 0; i < 25; i++) {
        f.flush();
      }
    });
    assertEquals(2, during, "at the 10th and the 20th call");
    assertEquals(3, flushes.get(), "and the last 5 after the pass");
  }

  @Test
  void callsFromOtherThreadsAreGatheredOnTheLoop() throws Exception {
    ZmtpBatchFlusher f = new ZmtpBatchFlusher(ch, 1);
    // From this thread, maxPending does not apply: each call only makes sure a flush is queued.
    ch.eventLoop().submit(() -> {
      try {
        Thread t = new Thread(() -> {
          for (int i = 0; i < 100; i++) {
            f.flush();
          }
        });
        t.start();
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }).sync();
    ch.eventLoop().submit(() -> { }).sync();
    assertEquals(1, flushes.get(), "100 calls made while the loop was busy: one flush");
    onLoop(f::flush);
    assertEquals(2, flushes.get(), "on the loop, maxPending 1 flushes at once");
  }
}
