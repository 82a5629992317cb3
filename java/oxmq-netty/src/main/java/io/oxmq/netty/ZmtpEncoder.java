package io.oxmq.netty;

/**
 * Writes an application's own message type as ZMTP frames, with no intermediate
 * {@link ZmtpMessage}. Register one with {@link ZmtpCodec.Builder#encoder}; the codec calls it
 * for every outbound message of the registered type, on the channel's event loop.
 *
 * @param <T> the application type
 */
@FunctionalInterface
public interface ZmtpEncoder<T> {
  /**
   * Writes {@code message} as frames: call {@link ZmtpWriter#frame(int, boolean)} once per frame,
   * the last one with {@code more == false}.
   *
   * @param message the message
   * @param writer where the frames go
   */
  void encode(T message, ZmtpWriter writer);
}
