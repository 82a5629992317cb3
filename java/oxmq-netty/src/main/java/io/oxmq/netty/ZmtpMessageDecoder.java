package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.Arrays;
import java.util.List;

/**
 * The default {@link ZmtpDecoder}: builds {@link ZmtpMessage}s of slices of the input, each
 * holding a reference to it.
 */
public final class ZmtpMessageDecoder implements ZmtpDecoder {
  private ByteBuf[] frames = new ByteBuf[8]; // the frames so far of a message with MORE, reused
  private int count;

  /** Creates a decoder. */
  public ZmtpMessageDecoder() {}

  @Override
  public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
    frame(body.retainedSlice(), more, out);
  }

  /**
   * The codec's fast path: {@code slice} is a slice of the input that holds (or, by the time
   * the codec's decode call returns, will hold) its own reference on it.
   */
  void frame(ByteBuf slice, boolean more, List<Object> out) {
    if (!more && count == 0) {
      out.add(ZmtpMessage.adopt(new ByteBuf[] {slice}));
      return;
    }
    if (count == frames.length) {
      frames = Arrays.copyOf(frames, count * 2);
    }
    frames[count++] = slice;
    if (!more) {
      ByteBuf[] all = Arrays.copyOf(frames, count);
      Arrays.fill(frames, 0, count, null);
      count = 0;
      out.add(ZmtpMessage.adopt(all));
    }
  }

  @Override
  public void close() {
    for (int i = 0; i < count; i++) {
      frames[i].release();
      frames[i] = null;
    }
    count = 0;
  }
}
