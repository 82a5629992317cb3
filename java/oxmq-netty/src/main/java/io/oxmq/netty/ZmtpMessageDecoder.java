package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.Arrays;
import java.util.List;

/**
 * The default {@link ZmtpDecoder}: builds {@link ZmtpMessage}s of slices of the input. Each
 * message holds one reference on the buffer its frames are slices of (one per buffer, when its
 * frames arrived in different ones), however many frames it has.
 */
public final class ZmtpMessageDecoder implements ZmtpDecoder {
  // The frames so far of a message with MORE: the buffer each is in, and its body's start and
  // length there. Reused.
  private ByteBuf[] srcs = new ByteBuf[8];
  private int[] spans = new int[16];
  private int count;
  private ByteBuf[] backings = new ByteBuf[2]; // what those frames hold a reference on, distinct
  private int nbackings;
  private int wireStart = -1; // where those frames start in backings[0], headers included, or -1
  private int wireEnd; // where the last of them ends

  /** Creates a decoder. */
  public ZmtpMessageDecoder() {}

  @Override
  public void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out) {
    // A retained slice is its own backing: the message releases it, not the input.
    ByteBuf slice = body.retainedSlice();
    frame(slice, slice.readerIndex(), slice.readableBytes(), -1, -1, false, more, out);
  }

  /**
   * The codec's fast path: a frame whose body is {@code len} bytes at {@code start} of
   * {@code in}, and which is {@code [frameStart, frameEnd)} of it with its header (frameStart
   * -1 if unknown), in the 1.0 frame format if {@code v1}.
   *
   * @return 1 if the message needs a reference on {@code in} that it does not hold yet, which
   *     the caller takes (by the time its decode call returns); else 0
   */
  int frame(ByteBuf in, int start, int len, int frameStart, int frameEnd, boolean v1,
      boolean more, List<Object> out) {
    if (count == 0) {
      if (!more) {
        out.add(ZmtpMessage.adopt(in, new int[] {start, len}, frameStart, frameEnd, v1));
        return 1;
      }
      wireStart = frameStart;
    } else {
      if (count == srcs.length) {
        srcs = Arrays.copyOf(srcs, count * 2);
        spans = Arrays.copyOf(spans, count * 4);
      }
      if (frameStart != wireEnd || srcs[count - 1] != in) {
        wireStart = -1; // something came between the frames, or a read did
      }
    }
    wireEnd = frameEnd;
    srcs[count] = in;
    spans[2 * count] = start;
    spans[2 * count + 1] = len;
    count++;
    int take = 0;
    if (nbackings == 0 || backings[nbackings - 1] != in) {
      // Identity is safe: a buffer the message holds a reference on cannot be recycled.
      if (nbackings == backings.length) {
        backings = Arrays.copyOf(backings, nbackings * 2);
      }
      backings[nbackings++] = in;
      take = 1;
    }
    if (!more) {
      ZmtpMessage m;
      if (nbackings == 1) {
        m = ZmtpMessage.adopt(backings[0], Arrays.copyOf(spans, 2 * count), wireStart, wireEnd, v1);
      } else {
        ByteBuf[] frames = new ByteBuf[count];
        for (int i = 0; i < count; i++) {
          frames[i] = srcs[i].slice(spans[2 * i], spans[2 * i + 1]);
        }
        m = ZmtpMessage.adopt(frames, Arrays.copyOf(backings, nbackings));
      }
      reset();
      out.add(m);
    }
    return take;
  }

  private void reset() {
    Arrays.fill(srcs, 0, count, null);
    count = 0;
    Arrays.fill(backings, 0, nbackings, null);
    nbackings = 0;
  }

  @Override
  public void close() {
    for (int i = 0; i < nbackings; i++) {
      backings[i].release();
    }
    reset();
  }
}
