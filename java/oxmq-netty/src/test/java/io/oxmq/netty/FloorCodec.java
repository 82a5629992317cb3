package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A bound, not a codec: the least any ZMTP codec can do for the custom req/rep benchmark
 * ({@code OxmqNettyBench custom-floor}). It frames short ZMTP 3.x data frames and nothing else:
 * no greeting or handshake (it announces a ZMTP 3.1 peer of the given type as soon as the
 * channel is active), no frame-size limit, no check that an encoder wrote what it announced,
 * no rollback, no promises, no heartbeats. Bodies go to the decoder through the same reused
 * {@link ZmtpBodySlice} as {@link ZmtpCodec}'s, encoders write into one pooled batch, and the
 * application handlers, flusher and Netty pipeline are the benchmark's own; so the rate it
 * reaches is what the benchmark allows a codec on this machine, and the gap to
 * {@link ZmtpCodec} is what the real codec's work costs.
 *
 * <p>Added to a pipeline, it puts an encoder and a decoder in its place, ahead of the handlers
 * after it. Both ends must be floor codecs. A frame of 256 bytes or more ends the channel.
 */
public final class FloorCodec extends ChannelInitializer<Channel> {
  private static final int BATCH = 16 * 1024;

  private final ZmtpSocketType peerType;
  private final ZmtpEncoder<?> encoder;
  private final ZmtpDecoder decoder;

  /**
   * @param peerType the peer's socket type, as the handshake event reports it
   * @param encoder writes the application's outbound type
   * @param decoder reads frames into the application's inbound type
   */
  public FloorCodec(ZmtpSocketType peerType, ZmtpEncoder<?> encoder, ZmtpDecoder decoder) {
    this.peerType = peerType;
    this.encoder = encoder;
    this.decoder = decoder;
  }

  @Override
  protected void initChannel(Channel ch) {
    ch.pipeline().addFirst(new Encoder(encoder), new Decoder(peerType, decoder));
  }

  private static final class Decoder extends ByteToMessageDecoder {
    private final ZmtpSocketType peerType;
    private final ZmtpDecoder decoder;
    private final ZmtpBodySlice body = new ZmtpBodySlice();

    Decoder(ZmtpSocketType peerType, ZmtpDecoder decoder) {
      this.peerType = peerType;
      this.decoder = decoder;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
      super.channelActive(ctx);
      ctx.fireUserEventTriggered(new ZmtpHandshakeSuccess(ZmtpProtocol.ZMTP31, peerType,
          new byte[0], "NULL", null));
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
      ByteBuffer mem = in.nioBufferCount() == 1
          ? in.internalNioBuffer(0, in.capacity()).duplicate() : null;
      int zero = mem != null ? mem.position() : 0;
      int r = in.readerIndex();
      int end = in.writerIndex();
      while (end - r >= 2) {
        int fl = in.getUnsignedShort(r);
        int len = ZmtpWire.shortDataLength(fl);
        if (len < 0) {
          throw new IllegalStateException("the floor codec reads short data frames only");
        }
        if (end - r - 2 < len) {
          break;
        }
        ByteBuf b = mem != null ? body.point(in, mem, zero, r + 2, len) : in.slice(r + 2, len);
        r += 2 + len;
        in.readerIndex(r);
        decoder.frame(ctx, b, ZmtpWire.shortDataMore(fl), out);
      }
    }
  }

  private static final class Encoder extends ChannelOutboundHandlerAdapter {
    @SuppressWarnings("rawtypes")
    private final ZmtpEncoder encoder;
    private ByteBuf batch;
    private final ZmtpWriter writer = new ZmtpWriter() {
      @Override
      public ByteBuf frame(int size, boolean more) {
        if ((size & ~0xFF) != 0) {
          throw new IllegalArgumentException("the floor codec writes short frames only: " + size);
        }
        return batch.writeShort(ZmtpWire.shortDataHeader(size, more));
      }

      @Override
      public void frame(ByteBuf b, boolean more) {
        int len = b.readableBytes();
        frame(len, more).writeBytes(b, b.readerIndex(), len);
      }
    };

    Encoder(ZmtpEncoder<?> encoder) {
      this.encoder = encoder;
    }

    @SuppressWarnings("unchecked")
    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      if (batch == null) {
        batch = ctx.alloc().ioBuffer(BATCH + 512);
      }
      encoder.encode(msg, writer);
      if (batch.readableBytes() >= BATCH) {
        ctx.write(batch, ctx.voidPromise());
        batch = null;
      }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
      if (batch != null) {
        ctx.write(batch, ctx.voidPromise());
        batch = null;
      }
      ctx.flush();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
      if (batch != null) {
        batch.release();
        batch = null;
      }
    }
  }
}
