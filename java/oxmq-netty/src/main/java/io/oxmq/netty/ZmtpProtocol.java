package io.oxmq.netty;

/** A ZMTP protocol revision, oldest first. */
public enum ZmtpProtocol {
  /** ZMTP/1.0 (RFC 13): length-prefixed frames, no greeting, no socket type. */
  ZMTP10,
  /** ZMTP/2.0 (RFC 15): signature, revision 0x01, socket-type byte, flags-first frames. */
  ZMTP20,
  /** ZMTP/3.0 (RFC 23): 64-byte greeting, security mechanisms, commands. */
  ZMTP30,
  /** ZMTP/3.1 (RFC 37): 3.0 plus SUBSCRIBE/CANCEL, PING/PONG commands. */
  ZMTP31;

  /** @return true for 3.0 and 3.1, the revisions with commands and a 64-byte greeting */
  public boolean isV3() {
    return this == ZMTP30 || this == ZMTP31;
  }
}
