package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ReferenceCounted;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A multipart ZeroMQ message: an ordered list of frames, each a {@link ByteBuf}.
 *
 * <p>Reference-counted: a message made by {@link #wrap} or {@link #fromUtf8} owns one reference
 * to each frame and releases them when its own count reaches zero. A received message holds
 * slices of the receive buffer (no copy) and one reference on that buffer for all of them; a
 * frame's {@code refCnt()} is the buffer's, as with any slice, so retain a frame to keep it past
 * its message. Writing a message to a {@link ZmtpCodec} releases it once encoded, as Netty does
 * with any outbound message; {@link #retain()} it first to send it again. A received message
 * written on unchanged (an echo, a proxy) goes out as it arrived, headers and all, with one copy.
 *
 * <p>The count is thread-safe as Netty's is, with one difference in what it detects: releasing
 * the last reference is a plain store, not a compare-and-set, so two threads that release the
 * same last reference at once (which the contract forbids) are not told apart.
 */
public final class ZmtpMessage implements ReferenceCounted {
  private static final VarHandle EXTRA;

  static {
    try {
      EXTRA = MethodHandles.lookup().findVarHandle(ZmtpMessage.class, "extra", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // References beyond the first, so that a new message needs no store for its count of one
  // (Netty's counted objects start with a volatile store: a full fence per received message);
  // -1 once released.
  private volatile int extra;
  // The frames; for a received message, made on first use from spans (a slice each costs an
  // object and checks that a message passed on unread, as an echo or a proxy does, never needs).
  private final ByteBuf[] frames;
  private final int[] spans; // frame i's body is [spans[2i], +spans[2i+1]) of backing; or null
  // What the message holds one reference on: null for one on each frame; else the one buffer
  // (or buffers, when a message spans reads) its frames are plain slices of.
  private final ByteBuf backing;
  private final ByteBuf[] backings;
  // The frames as they arrived, headers included: [wireStart, wireEnd) of backing, in the 1.0
  // frame format if wireV1, else the 2.0/3.x one (the two are alike for messages); wireStart is
  // -1 when they are not one contiguous range of one buffer.
  private final int wireStart;
  private final int wireEnd;
  private final boolean wireV1;

  private ZmtpMessage(ByteBuf[] frames, int[] spans, ByteBuf backing, ByteBuf[] backings,
      int wireStart, int wireEnd, boolean wireV1) {
    this.frames = frames;
    this.spans = spans;
    this.backing = backing;
    this.backings = backings;
    this.wireStart = wireStart;
    this.wireEnd = wireEnd;
    this.wireV1 = wireV1;
  }

  private ZmtpMessage(ByteBuf[] frames) {
    this(frames, null, null, null, -1, -1, false);
  }

  /**
   * @param frames the frames; the message takes over one reference to each
   * @return a message of these frames
   */
  public static ZmtpMessage wrap(ByteBuf... frames) {
    return new ZmtpMessage(frames.clone());
  }

  /**
   * @param frames the frames; the message takes over one reference to each
   * @return a message of these frames
   */
  public static ZmtpMessage wrap(List<ByteBuf> frames) {
    return new ZmtpMessage(frames.toArray(new ByteBuf[0]));
  }

  /**
   * For decoders: a message of {@code spans.length / 2} frames, frame i's body being
   * {@code spans[2i]} and {@code spans[2i + 1]} bytes on of {@code backing}, on which the message
   * takes over one reference for all of them. They arrived as {@code [wireStart, wireEnd)} of
   * it, headers included (wireStart -1 if not contiguous), in the 1.0 frame format if
   * {@code wireV1}. Takes the array itself (no copy).
   */
  static ZmtpMessage adopt(ByteBuf backing, int[] spans, int wireStart, int wireEnd,
      boolean wireV1) {
    return new ZmtpMessage(new ByteBuf[spans.length >> 1], spans, backing, null, wireStart,
        wireEnd, wireV1);
  }

  /**
   * For decoders: takes the array itself (no copy), the frames being plain slices of the
   * {@code backings}, on each of which the message takes over one reference.
   */
  static ZmtpMessage adopt(ByteBuf[] frames, ByteBuf[] backings) {
    return new ZmtpMessage(frames, null, null, backings, -1, -1, false);
  }

  /**
   * For encoders: the length of the frames as they arrived, headers included, if they can be
   * sent again as they are in the frame format of {@code v} (in {@link #wireBuffer()} from
   * {@link #wireStart()}); -1 if they cannot: they are not one range of one buffer, they are in
   * the other format, or a frame's readable bytes were changed (its indexes; its contents are
   * the buffer's own, so a change to them is in the range too).
   */
  int wireLength(ZmtpProtocol v) {
    if (wireStart < 0 || wireV1 != (v == ZmtpProtocol.ZMTP10)) {
      return -1;
    }
    for (ByteBuf f : frames) {
      // a slice's capacity is fixed at its creation length; a frame not made yet is unchanged
      if (f != null && (f.readerIndex() != 0 || f.writerIndex() != f.capacity())) {
        return -1;
      }
    }
    return wireEnd - wireStart;
  }

  ByteBuf wireBuffer() {
    return backing;
  }

  int wireStart() {
    return wireStart;
  }

  /**
   * @param strings frame contents, encoded as UTF-8 into unpooled heap buffers
   * @return a message with one frame per string
   */
  public static ZmtpMessage fromUtf8(CharSequence... strings) {
    ByteBuf[] f = new ByteBuf[strings.length];
    for (int i = 0; i < f.length; i++) {
      f[i] = Unpooled.copiedBuffer(strings[i], StandardCharsets.UTF_8);
    }
    return new ZmtpMessage(f);
  }

  /** @return the number of frames */
  public int size() {
    return frames.length;
  }

  /**
   * @param i frame index
   * @return frame {@code i}, still owned by this message; the same buffer on every call from
   *     one thread (a received message makes it on first use, which is not synchronized)
   */
  public ByteBuf frame(int i) {
    ByteBuf f = frames[i];
    if (f == null) {
      f = frames[i] = backing.slice(spans[2 * i], spans[2 * i + 1]);
    }
    return f;
  }

  /** @return the frames, still owned by this message (unmodifiable view) */
  public List<ByteBuf> frames() {
    for (int i = 0; i < frames.length; i++) {
      frame(i);
    }
    return Collections.unmodifiableList(Arrays.asList(frames));
  }

  /** @return frame {@code i} decoded as UTF-8 */
  public String frameAsString(int i) {
    return frame(i).toString(StandardCharsets.UTF_8);
  }

  @Override
  public int refCnt() {
    return extra + 1;
  }

  @Override
  public ZmtpMessage retain() {
    return retain(1);
  }

  @Override
  public ZmtpMessage retain(int increment) {
    if (increment <= 0) {
      throw new IllegalArgumentException("increment: " + increment + " (expected: > 0)");
    }
    int old = (int) EXTRA.getAndAdd(this, increment);
    if (old < 0 || old + increment < old) {
      EXTRA.getAndAdd(this, -increment);
      throw new IllegalReferenceCountException(old + 1, increment);
    }
    return this;
  }

  @Override
  public ZmtpMessage touch() {
    return this;
  }

  @Override
  public boolean release() {
    return release(1);
  }

  /**
   * Releasing the last references needs no atomic update: whoever holds all of them is the only
   * one allowed to touch the count.
   */
  @Override
  public boolean release(int decrement) {
    if (decrement <= 0) {
      throw new IllegalArgumentException("decrement: " + decrement + " (expected: > 0)");
    }
    for (;;) {
      int e = extra;
      int left = e + 1 - decrement;
      if (e < 0 || left < 0) {
        throw new IllegalReferenceCountException(e + 1, -decrement);
      }
      if (left == 0) {
        EXTRA.setRelease(this, -1);
        deallocate();
        return true;
      }
      if (EXTRA.compareAndSet(this, e, e - decrement)) {
        return false;
      }
    }
  }

  /**
   * Does not touch the frames: Netty's pipeline touches every outbound message, and recording a
   * hint per frame costs more than the rest of encoding a small message. Leak reports of frames
   * still show where they were allocated.
   */
  @Override
  public ZmtpMessage touch(Object hint) {
    return this;
  }

  private void deallocate() {
    if (backing != null) {
      backing.release();
    } else {
      for (ReferenceCounted f : backings != null ? backings : frames) {
        f.release();
      }
    }
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ZmtpMessage[");
    for (int i = 0; i < frames.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      ByteBuf f = frame(i);
      sb.append(f.readableBytes() <= 64 ? f.toString(StandardCharsets.UTF_8)
          : f.readableBytes() + " bytes");
    }
    return sb.append(']').toString();
  }
}
