package io.oxmq.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;

/** Test handler: records the handshake event, inbound objects and exceptions. */
class Recorder extends ChannelInboundHandlerAdapter {
  final CompletableFuture<ZmtpHandshakeSuccess> handshake = new CompletableFuture<>();
  final LinkedBlockingQueue<Object> reads = new LinkedBlockingQueue<>();
  final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
  final CompletableFuture<Throwable> error = new CompletableFuture<>();
  volatile Object wiretap;

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
    if (evt instanceof ZmtpHandshakeSuccess) {
      handshake.complete((ZmtpHandshakeSuccess) evt);
    } else {
      events.add(evt);
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    reads.add(msg);
  }

  /** @return the kind of the {@link ZmtpException} the codec failed with; fails the test otherwise */
  String errorKind() {
    Throwable t = error.getNow(null);
    org.junit.jupiter.api.Assertions.assertInstanceOf(ZmtpException.class, t,
        "expected a ZmtpException, got " + t);
    return ((ZmtpException) t).kind();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    error.complete(cause);
  }
}
