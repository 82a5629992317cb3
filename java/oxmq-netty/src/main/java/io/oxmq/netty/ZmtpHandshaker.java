package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The handshake as a state machine over buffers (no I/O): {@link #start} writes what we send
 * first, {@link #feed} consumes the peer's bytes and writes our answers, until it returns true.
 *
 * <p>Revision detection follows libzmq's {@code zmtp_engine.cpp}: we send the 10-byte signature
 * {@code FF <8-byte identity length + 1> 7F}, which a ZMTP/1.0 peer reads as the start of our
 * identity frame. A peer whose first byte is not 0xFF, or whose 10th byte lacks bit 0, is a 1.0
 * peer without signature: we send the rest of our identity frame and read its identity frame.
 * Otherwise we send our revision byte and read the peer's: 0x00 (1.0 framing) and 0x01 (2.0)
 * are followed by a socket-type byte and an identity frame; 3 and above by the rest of a 64-byte
 * 3.x greeting, then READY commands (NULL) or, with PLAIN (RFC 24), HELLO from the client,
 * WELCOME from the server, INITIATE from the client and READY from the server. PLAIN is refused
 * with a 1.0 or 2.0 peer, which has no security mechanism.
 */
final class ZmtpHandshaker {
  private enum State {
    SIGNATURE, REVISION, LEGACY_TYPE, GREETING3, HELLO, WELCOME, INITIATE, READY, IDENTITY, DONE
  }

  /** The reason our PLAIN server gives a refused client, as libzmq's does for ZAP status 400. */
  static final String PLAIN_REFUSED = "Invalid username or password";

  private static byte[] mechanismField(String name) {
    byte[] f = new byte[20];
    byte[] n = name.getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(n, 0, f, 0, n.length);
    return f;
  }

  private final ZmtpSocketType socketType;
  private final byte[] identity;
  private final ZmtpProtocol maxProtocol;
  private final boolean asServer;
  private final long maxFrameSize;
  private final ZmtpPlain plain; // null: the NULL mechanism
  private final byte[] mechanism;
  private final ZmtpWire.Header header = new ZmtpWire.Header();

  private State state;
  private ZmtpProtocol negotiated;
  private ZmtpSocketType peerSocketType;
  private byte[] peerIdentity;
  private String userId = "";
  private boolean lenientIdentityFlags;

  ZmtpHandshaker(ZmtpSocketType socketType, byte[] identity, ZmtpProtocol maxProtocol,
      boolean asServer, long maxFrameSize) {
    this(socketType, identity, maxProtocol, asServer, maxFrameSize, null);
  }

  /** @param plain PLAIN credentials (client) or authenticator (server); null for NULL */
  ZmtpHandshaker(ZmtpSocketType socketType, byte[] identity, ZmtpProtocol maxProtocol,
      boolean asServer, long maxFrameSize, ZmtpPlain plain) {
    if (identity.length > 255) {
      throw new IllegalArgumentException("identity over 255 bytes");
    }
    if (maxProtocol.compareTo(ZmtpProtocol.ZMTP30) < 0 && socketType.legacyCode() < 0) {
      throw new IllegalArgumentException(socketType + " does not exist in " + maxProtocol);
    }
    this.socketType = socketType;
    this.identity = identity;
    this.maxProtocol = maxProtocol;
    this.asServer = asServer;
    if (plain != null && !maxProtocol.isV3()) {
      throw new IllegalArgumentException("PLAIN needs ZMTP 3.0 or later, not " + maxProtocol);
    }
    this.maxFrameSize = Math.max(maxFrameSize, 255);
    this.plain = plain;
    this.mechanism = mechanismField(plain == null ? "NULL" : "PLAIN");
  }

  /** Writes our first bytes: the signature, or for a 1.0-only codec our whole identity frame. */
  void start(ByteBuf out) {
    if (maxProtocol == ZmtpProtocol.ZMTP10) {
      negotiated = ZmtpProtocol.ZMTP10;
      writeIdentityFrame(out);
      lenientIdentityFlags = true; // a versioned peer answers FF <len> 7F <identity>
      state = State.IDENTITY;
      return;
    }
    out.writeByte(0xFF);
    out.writeLong(identity.length + 1L);
    out.writeByte(0x7F);
    state = State.SIGNATURE;
  }

  /**
   * Consumes the peer's handshake bytes from {@code in} (leaving whatever follows the handshake)
   * and writes our answers to {@code out}.
   *
   * @return true once the handshake is complete
   * @throws ZmtpException if the peer violates the protocol or is not a valid partner
   */
  boolean feed(ByteBuf in, ByteBuf out) {
    for (;;) {
      int r = in.readerIndex();
      int avail = in.readableBytes();
      switch (state) {
        case SIGNATURE:
          if (avail < 1) {
            return false;
          }
          if (in.getUnsignedByte(r) != 0xFF || (avail >= 10 && (in.getByte(r + 9) & 1) == 0)) {
            // A ZMTP/1.0 peer: these bytes are its identity frame. Our signature was the header
            // of ours; its body follows.
            negotiated = ZmtpProtocol.ZMTP10;
            if (plain != null) {
              throw new ZmtpException("LegacySecurity",
                  "a ZMTP/1.0 peer has no security mechanism; we use PLAIN");
            }
            out.writeBytes(identity);
            state = State.IDENTITY;
            continue;
          }
          if (avail < 10) {
            return false;
          }
          in.skipBytes(10);
          out.writeByte(maxProtocol.isV3() ? 3 : 1);
          state = State.REVISION;
          continue;
        case REVISION: {
          if (avail < 1) {
            return false;
          }
          int revision = in.getUnsignedByte(r);
          in.skipBytes(1);
          if (revision < 3 || !maxProtocol.isV3()) {
            negotiated = revision == 0 ? ZmtpProtocol.ZMTP10 : ZmtpProtocol.ZMTP20;
            if (plain != null) {
              throw new ZmtpException("LegacySecurity", "a ZMTP/" + (revision == 0 ? "1.0" : "2.0")
                  + " peer has no security mechanism; we use PLAIN");
            }
            if (socketType.legacyCode() < 0) {
              throw new ZmtpException("LegacySocketType",
                  socketType + " cannot talk to a ZMTP/" + (revision == 0 ? "1.0" : "2.0") + " peer");
            }
            out.writeByte(socketType.legacyCode());
            state = State.LEGACY_TYPE;
          } else {
            out.writeByte(maxProtocol == ZmtpProtocol.ZMTP31 ? 1 : 0);
            out.writeBytes(mechanism);
            out.writeByte(plain != null ? (plain.isServer() ? 1 : 0) : asServer ? 1 : 0);
            out.writeZero(31);
            state = State.GREETING3;
          }
          continue;
        }
        case LEGACY_TYPE: {
          if (avail < 1) {
            return false;
          }
          ZmtpSocketType peer = ZmtpSocketType.fromLegacyCode(in.getUnsignedByte(r));
          in.skipBytes(1);
          checkCompatible(peer);
          peerSocketType = peer;
          writeIdentityFrame(out);
          state = State.IDENTITY;
          continue;
        }
        case GREETING3: {
          // minor version, mechanism (20), as-server, filler (31)
          if (avail < 53) {
            return false;
          }
          int minor = in.getUnsignedByte(r);
          for (int i = 0; i < 20; i++) {
            if (in.getByte(r + 1 + i) != mechanism[i]) {
              String theirs = in.toString(r + 1, 20, StandardCharsets.US_ASCII).replace("\0", "");
              String ours = new String(mechanism, StandardCharsets.US_ASCII).replace("\0", "");
              throw new ZmtpException("MechanismMismatch", "peer uses " + theirs + ", we use " + ours);
            }
          }
          // The peer's as-server bit is not read: libzmq 4.3 sends 0 as a PLAIN server too. Two
          // clients fail on each other's HELLO; two servers wait for one until the timeout.
          in.skipBytes(53);
          negotiated = minor == 0 || maxProtocol == ZmtpProtocol.ZMTP30
              ? ZmtpProtocol.ZMTP30 : ZmtpProtocol.ZMTP31;
          if (plain == null) {
            ZmtpCommand.ready(metadata()).writeFrame(out);
            state = State.READY;
          } else if (plain.isServer()) {
            state = State.HELLO;
          } else {
            ZmtpCommand.of("HELLO", plain.hello()).writeFrame(out);
            state = State.WELCOME;
          }
          continue;
        }
        case HELLO: {
          ZmtpCommand cmd = readCommand(in, "HELLO");
          if (cmd == null) {
            return false;
          }
          try {
            userId = plain.authenticate(cmd.data());
          } catch (ZmtpException e) {
            if (e.kind().equals("AuthenticationFailed")) {
              ZmtpCommand.error(PLAIN_REFUSED).writeFrame(out);
            }
            throw e;
          }
          ZmtpCommand.of("WELCOME", new byte[0]).writeFrame(out);
          state = State.INITIATE;
          continue;
        }
        case WELCOME: {
          if (readCommand(in, "WELCOME") == null) {
            return false;
          }
          ZmtpCommand.initiate(metadata()).writeFrame(out);
          state = State.READY;
          continue;
        }
        case INITIATE: {
          ZmtpCommand cmd = readCommand(in, "INITIATE");
          if (cmd == null) {
            return false;
          }
          acceptMetadata(cmd);
          ZmtpCommand.ready(metadata()).writeFrame(out);
          state = State.DONE;
          return true;
        }
        case READY: {
          ZmtpCommand cmd = readCommand(in, "READY");
          if (cmd == null) {
            return false;
          }
          acceptMetadata(cmd);
          state = State.DONE;
          return true;
        }
        case IDENTITY: {
          int hl = ZmtpWire.parse(negotiated, in, r, maxFrameSize, lenientIdentityFlags
              || negotiated == ZmtpProtocol.ZMTP10, header);
          if (hl == 0) {
            return false;
          }
          if (header.length > 255) {
            throw new ZmtpException("IdentityTooLong", "peer identity of " + header.length + " bytes");
          }
          if (avail < hl + header.length) {
            return false;
          }
          peerIdentity = new byte[(int) header.length];
          in.getBytes(r + hl, peerIdentity);
          in.skipBytes(hl + (int) header.length);
          state = State.DONE;
          return true;
        }
        case DONE:
          return true;
        default:
          throw new IllegalStateException(String.valueOf(state));
      }
    }
  }

  /**
   * Reads the next handshake command, which must be {@code expected}; null until it is whole.
   * The peer's ERROR becomes a {@code PeerError}.
   */
  private ZmtpCommand readCommand(ByteBuf in, String expected) {
    int r = in.readerIndex();
    int hl = ZmtpWire.parse(ZmtpProtocol.ZMTP31, in, r, maxFrameSize, false, header);
    if (hl == 0 || in.readableBytes() < hl + header.length) {
      return null;
    }
    if (!header.command) {
      throw new ZmtpException("UnexpectedMessage", "message frame before " + expected);
    }
    ByteBuf body = in.slice(r + hl, (int) header.length);
    if (plain != null && isLibzmqPlainError(body)) {
      throw new ZmtpException("PeerError", "peer refused the handshake: "
          + body.toString(body.readerIndex() + 6, body.readableBytes() - 6,
              StandardCharsets.UTF_8));
    }
    ZmtpCommand cmd = ZmtpCommand.parse(body);
    if (cmd.name().equals("ERROR")) {
      throw new ZmtpException("PeerError", "peer refused the handshake: " + cmd.reason());
    }
    if (!cmd.name().equals(expected)) {
      throw new ZmtpException("UnexpectedCommand", cmd.name() + " before " + expected);
    }
    in.skipBytes(hl + (int) header.length);
    return cmd;
  }

  /**
   * libzmq 4.3's PLAIN server writes its ERROR command's name as the C string {@code "\x05ERROR"},
   * where the hex escape takes the E: the body starts {@code 5E 'R' 'R' 'O' 'R'}, then the
   * status code with its length. libzmq's PLAIN client matches the same bytes, so its refusals
   * reach libzmq clients as ERRORs; they should reach ours as ERRORs too, not as a malformed
   * command.
   */
  private static boolean isLibzmqPlainError(ByteBuf body) {
    int i = body.readerIndex();
    return body.readableBytes() >= 6 && body.getByte(i) == 0x5E && body.getByte(i + 1) == 'R'
        && body.getByte(i + 2) == 'R' && body.getByte(i + 3) == 'O' && body.getByte(i + 4) == 'R'
        && (body.getByte(i + 5) & 0xFF) == body.readableBytes() - 6;
  }

  /** Our READY (or INITIATE) metadata. */
  private Map<String, byte[]> metadata() {
    Map<String, byte[]> props = new LinkedHashMap<>();
    props.put("Socket-Type", socketType.nameBytes());
    if (identity.length > 0 || socketType == ZmtpSocketType.REQ
        || socketType == ZmtpSocketType.DEALER || socketType == ZmtpSocketType.ROUTER) {
      props.put("Identity", identity);
    }
    return props;
  }

  /** Takes the peer's socket type and identity from its READY (or INITIATE). */
  private void acceptMetadata(ZmtpCommand cmd) {
    byte[] type = cmd.properties().get("Socket-Type");
    if (type == null) {
      throw new ZmtpException("Metadata", cmd.name() + " without Socket-Type");
    }
    ZmtpSocketType peer = ZmtpSocketType.fromName(new String(type, StandardCharsets.US_ASCII));
    checkCompatible(peer);
    peerSocketType = peer;
    byte[] id = cmd.properties().get("Identity");
    if (id != null && id.length > 255) {
      throw new ZmtpException("IdentityTooLong", "peer identity of " + id.length + " bytes");
    }
    peerIdentity = id == null ? new byte[0] : id;
  }

  private void checkCompatible(ZmtpSocketType peer) {
    if (!socketType.isCompatible(peer)) {
      throw new ZmtpException("IncompatibleSocketType", socketType + " cannot talk to " + peer);
    }
  }

  private void writeIdentityFrame(ByteBuf out) {
    ZmtpWire.write(negotiated, out, identity.length, false, false);
    out.writeBytes(identity);
  }

  ZmtpProtocol negotiated() {
    return negotiated;
  }

  ZmtpSocketType peerSocketType() {
    return peerSocketType;
  }

  byte[] peerIdentity() {
    return peerIdentity;
  }

  /** @return "NULL" or "PLAIN" */
  String mechanism() {
    return plain == null ? "NULL" : "PLAIN";
  }

  /** @return the user name our PLAIN server accepted; empty otherwise */
  String userId() {
    return userId;
  }

  boolean isDone() {
    return state == State.DONE;
  }
}
