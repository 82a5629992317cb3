/**
 * oxmq-netty: a ZMTP 1.0, 2.0, 3.0 and 3.1 codec for Netty 4.1, in pure Java.
 *
 * <p>Put a {@link io.oxmq.netty.ZmtpCodec} in a channel pipeline; see the package documentation
 * of {@code io.oxmq.netty}.
 */
module io.oxmq.netty {
  requires io.netty.buffer;
  requires io.netty.codec;
  requires io.netty.common;
  requires io.netty.transport;

  exports io.oxmq.netty;
}
