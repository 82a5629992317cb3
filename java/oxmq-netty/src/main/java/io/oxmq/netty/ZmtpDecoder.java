package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import java.util.List;

/**
 * Reads the frames of incoming messages into an application's own types, with no intermediate
 * {@link ZmtpMessage}. One instance per channel ({@link ZmtpCodec.Builder#decoder} takes a
 * factory); called on the channel's event loop.
 */
public interface ZmtpDecoder {
  /**
   * One whole frame. {@code body} is a slice of the receive buffer, valid during this call only:
   * {@code body.retainedSlice()} (or {@code retain()}) to keep it.
   *
   * @param ctx the codec's context
   * @param body the frame body (readable bytes)
   * @param more true if another frame of this message follows
   * @param out where to add decoded objects; each is passed to {@code channelRead}
   */
  void frame(ChannelHandlerContext ctx, ByteBuf body, boolean more, List<Object> out);

  /** The channel is gone: release whatever a partly read message holds. */
  default void close() {}
}
