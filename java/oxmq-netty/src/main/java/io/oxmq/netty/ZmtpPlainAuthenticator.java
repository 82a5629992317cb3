package io.oxmq.netty;

/**
 * Decides whether a PLAIN client (RFC 24) may connect to a codec built with
 * {@link ZmtpCodec.Builder#plainServer}: the role libzmq gives a ZAP handler. It runs on the
 * channel's event loop during the handshake, so it must not block. A refused client (false, or
 * an exception) gets an ERROR command, and the channel closes after a {@link ZmtpException} of
 * kind {@code AuthenticationFailed}.
 */
@FunctionalInterface
public interface ZmtpPlainAuthenticator {
  /**
   * @param username the client's user name (its bytes as UTF-8)
   * @param password the client's password (its bytes as UTF-8)
   * @return true to accept the client
   */
  boolean authenticate(String username, String password);
}
