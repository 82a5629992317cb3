package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Write futures over a real connection whose reader is held back, so that several flushes'
 * batches wait in the channel at once: each future completes once, in write order, successfully
 * when its batch is written and with a failure when the channel closes first.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WritePromiseTest {
  private static final int GROUPS = 6;
  private static final int PER_GROUP = 3000;
  private static final String BODY = "x".repeat(1000);

  private NioEventLoopGroup group;
  private Channel server;
  private Channel peer; // the accepted end, not reading
  private final CompletableFuture<Channel> accepted = new CompletableFuture<>();
  private final AtomicInteger received = new AtomicInteger();

  @BeforeEach
  void listen() throws InterruptedException {
    group = new NioEventLoopGroup(2);
    server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
        .childOption(ChannelOption.AUTO_READ, false)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(ZmtpCodec.of(ZmtpSocketType.ROUTER),
                new ChannelInboundHandlerAdapter() {
                  @Override
                  public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ReferenceCountUtil.release(msg);
                    received.incrementAndGet();
                  }
                });
            accepted.complete(ch);
          }
        }).bind(new InetSocketAddress("127.0.0.1", 0)).sync().channel();
  }

  @AfterEach
  void close() {
    server.close().syncUninterruptibly();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Connects and completes the handshake, the peer reading nothing after it. */
  private Channel connect() throws Exception {
    CountDownLatch handshaken = new CountDownLatch(1);
    Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
        .handler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel ch) {
            ch.pipeline().addLast(ZmtpCodec.of(ZmtpSocketType.DEALER),
                new ChannelInboundHandlerAdapter() {
                  @Override
                  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                    if (evt instanceof ZmtpHandshakeSuccess) {
                      handshaken.countDown();
                    }
                  }
                });
          }
        }).connect(server.localAddress()).sync().channel();
    peer = accepted.get(10, TimeUnit.SECONDS);
    peer.read(); // the handshake only
    assertTrue(handshaken.await(10, TimeUnit.SECONDS));
    return client;
  }

  /** Writes GROUPS flushes of PER_GROUP messages, about 18 MB, more than the sockets hold. */
  private static List<ChannelFuture> writeGroups(Channel ch, List<Integer> order)
      throws Exception {
    List<ChannelFuture> futures = Collections.synchronizedList(new ArrayList<>());
    ch.eventLoop().submit(() -> {
      for (int g = 0; g < GROUPS; g++) {
        for (int i = 0; i < PER_GROUP; i++) {
          final int n = futures.size();
          ChannelFuture f = ch.write(ZmtpMessage.fromUtf8(BODY));
          f.addListener(x -> order.add(n));
          futures.add(f);
        }
        ch.flush();
      }
    }).sync();
    return futures;
  }

  @Test
  void futuresOfManyFlushesCompleteInWriteOrderOnceWritten() throws Exception {
    Channel client = connect();
    List<Integer> order = Collections.synchronizedList(new ArrayList<>());
    List<ChannelFuture> futures = writeGroups(client, order);
    assertFalse(futures.get(futures.size() - 1).isDone(), "the reader holds the last back");
    peer.config().setAutoRead(true);
    for (ChannelFuture f : futures) {
      assertTrue(f.await(10, TimeUnit.SECONDS));
      assertTrue(f.isSuccess(), () -> "failed: " + f.cause());
    }
    List<Integer> expected = new ArrayList<>();
    for (int i = 0; i < futures.size(); i++) {
      expected.add(i);
    }
    client.eventLoop().submit(() -> { }).sync(); // listeners ran on the loop before this
    assertEquals(expected, order);
    client.close().sync();
  }

  @Test
  void futuresStillWaitingWhenTheChannelClosesFailAfterThoseWritten() throws Exception {
    Channel client = connect();
    List<Integer> order = Collections.synchronizedList(new ArrayList<>());
    List<ChannelFuture> futures = writeGroups(client, order);
    // and some not flushed at all
    List<ChannelFuture> unflushed = new ArrayList<>();
    client.eventLoop().submit(() -> {
      for (int i = 0; i < 10; i++) {
        unflushed.add(client.write(ZmtpMessage.fromUtf8("late")));
      }
    }).sync();
    client.close().sync();
    int succeeded = 0;
    boolean failedSeen = false;
    for (ChannelFuture f : futures) {
      assertTrue(f.await(10, TimeUnit.SECONDS));
      if (f.isSuccess()) {
        assertFalse(failedSeen, "a later write succeeded after an earlier one failed");
        succeeded++;
      } else {
        failedSeen = true;
      }
    }
    assertTrue(failedSeen, "the reader held most of them back");
    for (ChannelFuture f : unflushed) {
      assertTrue(f.await(10, TimeUnit.SECONDS));
      assertFalse(f.isSuccess());
    }
    assertTrue(succeeded < futures.size());
  }
}
