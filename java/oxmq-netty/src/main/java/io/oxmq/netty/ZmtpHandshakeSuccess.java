package io.oxmq.netty;

/**
 * User event fired by {@link ZmtpCodec} once the handshake is complete, before any message of
 * the peer. Messages written earlier are sent right after it.
 */
public final class ZmtpHandshakeSuccess {
  private final ZmtpProtocol protocol;
  private final ZmtpSocketType peerSocketType;
  private final byte[] peerIdentity;
  private final String mechanism;
  private final String userId;

  ZmtpHandshakeSuccess(ZmtpProtocol protocol, ZmtpSocketType peerSocketType, byte[] peerIdentity,
      String mechanism, String userId) {
    this.protocol = protocol;
    this.peerSocketType = peerSocketType;
    this.peerIdentity = peerIdentity;
    this.mechanism = mechanism;
    this.userId = userId;
  }

  /** @return the security mechanism: {@code NULL} or {@code PLAIN} */
  public String mechanism() {
    return mechanism;
  }

  /**
   * @return the user name a PLAIN server (this codec) accepted, as libzmq's {@code User-Id}
   *     message property; empty otherwise
   */
  public String userId() {
    return userId;
  }

  /** @return the negotiated protocol revision */
  public ZmtpProtocol protocol() {
    return protocol;
  }

  /** @return the peer's socket type, or null for a ZMTP/1.0 peer (1.0 does not send it) */
  public ZmtpSocketType peerSocketType() {
    return peerSocketType;
  }

  /** @return the peer's identity (routing id); empty if it sent none. A copy. */
  public byte[] peerIdentity() {
    return peerIdentity.clone();
  }

  @Override
  public String toString() {
    return "ZmtpHandshakeSuccess{" + protocol + " " + mechanism + ", peer " + peerSocketType
        + ", identity " + peerIdentity.length + " bytes}";
  }
}
