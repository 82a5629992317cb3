package io.oxmq.netty.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.oxmq.netty.ZmtpCodec;
import io.oxmq.netty.ZmtpMessage;
import io.oxmq.netty.ZmtpSocketType;

/**
 * The codec's read path alone, on one thread: a stream of encoded messages fed in 64 KiB reads
 * to a codec in an {@link EmbeddedChannel}, each decoded message released.
 *
 * <pre>DecodeBench FRAMES</pre>
 *
 * <p>FRAMES is 1 (one 100-byte frame, the throughput benchmark's message) or 6 (the request/reply
 * benchmark's envelope and body). Prints ns per message for each of 10 timed passes after 20
 * untimed ones. No sockets and no second thread, so it moves far less from run to run than the
 * socket benchmarks on a shared machine.
 */
public final class DecodeBench {
  private static final int MESSAGES = 200_000;
  private static final int READ = 64 * 1024;
  private static long count;

  private DecodeBench() {}

  public static void main(String[] args) {
    int frames = Integer.parseInt(args[0]);
    EmbeddedChannel enc = new EmbeddedChannel(ZmtpCodec.of(ZmtpSocketType.DEALER));
    EmbeddedChannel dec = new EmbeddedChannel(ZmtpCodec.of(ZmtpSocketType.DEALER),
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ((ZmtpMessage) msg).release();
            count++;
          }
        });
    for (int i = 0; i < 10; i++) { // the handshake
      ByteBuf x;
      while ((x = enc.readOutbound()) != null) {
        dec.writeInbound(x);
      }
      while ((x = dec.readOutbound()) != null) {
        enc.writeInbound(x);
      }
    }
    ZmtpMessage m = frames == 1 ? ZmtpMessage.fromUtf8(".".repeat(100))
        : ZmtpMessage.fromUtf8("envelope1", "envelope2", "", "d".repeat(20), "d".repeat(40),
            "d".repeat(100));
    for (int i = 0; i < MESSAGES; i++) {
      enc.write(m.retain());
    }
    enc.flush();
    m.release();
    ByteBuf all = Unpooled.buffer();
    ByteBuf x;
    while ((x = enc.readOutbound()) != null) {
      all.writeBytes(x);
      x.release();
    }
    byte[] stream = new byte[all.readableBytes()];
    all.readBytes(stream);
    all.release();
    for (int pass = 0; pass < 30; pass++) {
      count = 0;
      long t0 = System.nanoTime();
      for (int off = 0; off < stream.length; off += READ) {
        int k = Math.min(READ, stream.length - off);
        ByteBuf read = PooledByteBufAllocator.DEFAULT.directBuffer(k);
        read.writeBytes(stream, off, k);
        dec.writeInbound(read);
      }
      long t1 = System.nanoTime();
      if (count != MESSAGES) {
        throw new IllegalStateException(count + " messages decoded of " + MESSAGES);
      }
      if (pass >= 20) {
        System.out.printf("%d frames: %.1f ns/message%n", frames, (t1 - t0) / (double) MESSAGES);
      }
    }
  }
}
