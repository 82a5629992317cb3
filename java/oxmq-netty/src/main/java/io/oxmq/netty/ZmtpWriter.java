package io.oxmq.netty;

import io.netty.buffer.ByteBuf;

/**
 * Where a {@link ZmtpEncoder} writes the frames of one message, straight into the codec's
 * outgoing batch buffer (no intermediate message object).
 */
public interface ZmtpWriter {
  /**
   * Starts a frame of exactly {@code size} bytes and returns the buffer to write its body into.
   * The codec checks that exactly {@code size} bytes were written when the next frame starts or
   * the message ends.
   *
   * @param size body size in bytes
   * @param more true if another frame of this message follows
   * @return the buffer to write the body into (do not keep it)
   */
  ByteBuf frame(int size, boolean more);

  /**
   * Writes a whole frame: copies the readable bytes of {@code body}, without releasing it.
   *
   * @param body the frame body
   * @param more true if another frame of this message follows
   */
  void frame(ByteBuf body, boolean more);
}
