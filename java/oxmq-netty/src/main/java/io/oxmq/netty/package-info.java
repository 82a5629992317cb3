/**
 * A ZMTP codec for Netty 4.1: ZMTP/1.0 (RFC 13), 2.0 (RFC 15), 3.0 (RFC 23) and 3.1 (RFC 37) with
 * the NULL mechanism, or PLAIN over ZMTP 3.x, in either role.
 *
 * <p>Typical use: add {@code ZmtpCodec.builder().socketType(ZmtpSocketType.DEALER).build()} to a
 * pipeline, wait for the {@link io.oxmq.netty.ZmtpHandshakeSuccess} user event, then read and
 * write {@link io.oxmq.netty.ZmtpMessage}s (or your own types through a
 * {@link io.oxmq.netty.ZmtpEncoder} and {@link io.oxmq.netty.ZmtpDecoder}). Use a
 * {@link io.oxmq.netty.ZmtpBatchFlusher} to gather many writes into few system calls.
 */
package io.oxmq.netty;
