package io.oxmq.netty;

/**
 * A protocol violation by the peer (or an unusable configuration found during the handshake).
 * The codec fires it down the pipeline with {@code exceptionCaught} and closes the channel.
 *
 * <p>{@link #kind()} names the violation with the same names as the error variants of oxmq's Rust
 * codec ({@code TooLarge}, {@code ReservedFlags}, {@code IncompatibleSocketType}, ...), which the
 * shared golden vectors use.
 */
public class ZmtpException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String kind;

  /**
   * @param kind short name of the violation, e.g. {@code TooLarge}
   * @param message human-readable detail
   */
  public ZmtpException(String kind, String message) {
    super(kind + ": " + message);
    this.kind = kind;
  }

  /** @return the short name of the violation, e.g. {@code TooLarge} */
  public String kind() {
    return kind;
  }
}
