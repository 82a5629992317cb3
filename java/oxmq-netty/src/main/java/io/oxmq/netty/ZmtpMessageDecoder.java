package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayList;
import java.util.List;

/** The default {@link ZmtpDecoder}: builds {@link ZmtpMessage}s of retained slices. */
public final class ZmtpMessageDecoder implements ZmtpDecoder {
  private List<ByteBuf> frames = new ArrayList<>(4);

  /** Creates a decoder. */
  public ZmtpMessageDecoder() {}

  @Override
  public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
    frame(body.retainedSlice(), more, out);
  }

  /** The codec's fast path: {@code retained} is already a retained slice of the input. */
  void frame(ByteBuf retained, boolean more, List<Object> out) {
    frames.add(retained);
    if (!more) {
      out.add(ZmtpMessage.adopt(frames));
      frames = new ArrayList<>(4);
    }
  }

  @Override
  public void close() {
    for (ByteBuf f : frames) {
      f.release();
    }
    frames.clear();
  }
}
