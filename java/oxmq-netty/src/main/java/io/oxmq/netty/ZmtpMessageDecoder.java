package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.ArrayList;
import java.util.List;

/** The default {@link ZmtpDecoder}: builds {@link ZmtpMessage}s of slices of the input, each holding a reference to it. */
public final class ZmtpMessageDecoder implements ZmtpDecoder {
  private final ArrayList<ByteBuf> frames = new ArrayList<>(8); // frames so far, reused

  /** Creates a decoder. */
  public ZmtpMessageDecoder() {}

  @Override
  public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
    frame(body.retainedSlice(), more, out);
  }

  /** The codec's fast path: {@code retained} is a slice that already holds its reference. */
  void frame(ByteBuf retained, boolean more, List<Object> out) {
    if (!more) {
      ByteBuf[] all;
      if (frames.isEmpty()) {
        all = new ByteBuf[] {retained};
      } else {
        frames.add(retained);
        all = frames.toArray(new ByteBuf[0]);
        frames.clear();
      }
      out.add(ZmtpMessage.adopt(all));
    } else {
      frames.add(retained);
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
