package io.oxmq.netty;

import java.nio.charset.StandardCharsets;

/** ZeroMQ socket types, with their ZMTP 3.x names and ZMTP/2.0 type numbers. */
public enum ZmtpSocketType {
  PAIR(0), PUB(1), SUB(2), REQ(3), REP(4), DEALER(5), ROUTER(6), PULL(7), PUSH(8), XPUB(9), XSUB(10),
  /** Draft types: ZMTP 3.x only. */
  SERVER(-1), CLIENT(-1), RADIO(-1), DISH(-1), GATHER(-1), SCATTER(-1), DGRAM(-1), PEER(-1),
  CHANNEL(-1);

  private static final ZmtpSocketType[] BY_LEGACY = {
    PAIR, PUB, SUB, REQ, REP, DEALER, ROUTER, PULL, PUSH, XPUB, XSUB
  };

  private final int legacyCode;
  private final byte[] nameBytes;

  ZmtpSocketType(int legacyCode) {
    this.legacyCode = legacyCode;
    this.nameBytes = name().getBytes(StandardCharsets.US_ASCII);
  }

  /** @return the ZMTP/2.0 socket-type byte, or -1 for a type ZMTP/2.0 does not have */
  public int legacyCode() {
    return legacyCode;
  }

  byte[] nameBytes() {
    return nameBytes;
  }

  /**
   * @param code a ZMTP/2.0 socket-type byte
   * @return the type
   * @throws ZmtpException {@code UnknownSocketType} for a number outside 0..10
   */
  public static ZmtpSocketType fromLegacyCode(int code) {
    if (code < 0 || code >= BY_LEGACY.length) {
      throw new ZmtpException("UnknownSocketType", "ZMTP/2.0 socket type " + code);
    }
    return BY_LEGACY[code];
  }

  /**
   * @param name a ZMTP 3.x Socket-Type property value
   * @return the type
   * @throws ZmtpException {@code UnknownSocketType} for a name that is not a socket type
   */
  public static ZmtpSocketType fromName(String name) {
    for (ZmtpSocketType t : values()) {
      if (t.name().equals(name)) {
        return t;
      }
    }
    throw new ZmtpException("UnknownSocketType", "Socket-Type \"" + name + "\"");
  }

  /**
   * Whether a socket of this type may talk to a peer of type {@code peer} (RFC 23's table, plus
   * libzmq's draft pairs).
   *
   * @param peer the peer's type
   * @return true if the pair is valid
   */
  public boolean isCompatible(ZmtpSocketType peer) {
    switch (this) {
      case PAIR: return peer == PAIR;
      case PUB: case XPUB: return peer == SUB || peer == XSUB;
      case SUB: case XSUB: return peer == PUB || peer == XPUB;
      case REQ: return peer == REP || peer == ROUTER;
      case REP: return peer == REQ || peer == DEALER;
      case DEALER: return peer == REP || peer == DEALER || peer == ROUTER;
      case ROUTER: return peer == REQ || peer == DEALER || peer == ROUTER;
      case PULL: return peer == PUSH;
      case PUSH: return peer == PULL;
      case SERVER: return peer == CLIENT;
      case CLIENT: return peer == SERVER;
      case RADIO: return peer == DISH;
      case DISH: return peer == RADIO;
      case GATHER: return peer == SCATTER;
      case SCATTER: return peer == GATHER;
      case DGRAM: return peer == DGRAM;
      case PEER: return peer == PEER;
      case CHANNEL: return peer == CHANNEL;
      default: return false;
    }
  }
}
