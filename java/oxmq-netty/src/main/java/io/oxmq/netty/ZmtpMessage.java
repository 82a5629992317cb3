package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCounted;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A multipart ZeroMQ message: an ordered list of frames, each a {@link ByteBuf}.
 *
 * <p>Reference-counted: the message owns one reference to each frame and releases them when its
 * own count reaches zero. Received messages hold retained slices of the receive buffer (no
 * copy). Writing a message to a {@link ZmtpCodec} releases it once encoded, as Netty does with
 * any outbound message; {@link #retain()} it first to send it again.
 */
public final class ZmtpMessage extends AbstractReferenceCounted {
  private final ByteBuf[] frames;

  private ZmtpMessage(ByteBuf[] frames) {
    this.frames = frames;
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

  /** Takes the array itself (no copy): for decoders. */
  static ZmtpMessage adopt(ByteBuf[] frames) {
    return new ZmtpMessage(frames);
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
   * @return frame {@code i}, still owned by this message
   */
  public ByteBuf frame(int i) {
    return frames[i];
  }

  /** @return the frames, still owned by this message (unmodifiable view) */
  public List<ByteBuf> frames() {
    return Collections.unmodifiableList(Arrays.asList(frames));
  }

  /** @return frame {@code i} decoded as UTF-8 */
  public String frameAsString(int i) {
    return frames[i].toString(StandardCharsets.UTF_8);
  }

  @Override
  public ZmtpMessage retain() {
    super.retain();
    return this;
  }

  @Override
  public ZmtpMessage retain(int increment) {
    super.retain(increment);
    return this;
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

  @Override
  protected void deallocate() {
    for (ReferenceCounted f : frames) {
      f.release();
    }
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ZmtpMessage[");
    for (int i = 0; i < frames.length; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      ByteBuf f = frames[i];
      sb.append(f.readableBytes() <= 64 ? f.toString(StandardCharsets.UTF_8)
          : f.readableBytes() + " bytes");
    }
    return sb.append(']').toString();
  }
}
