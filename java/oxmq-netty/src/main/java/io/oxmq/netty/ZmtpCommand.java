package io.oxmq.netty;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A ZMTP 3.x command: READY, ERROR, SUBSCRIBE, CANCEL, PING, PONG, JOIN, LEAVE, or any other name
 * (kept as raw data). Immutable; holds copies, so it never owns a {@link ByteBuf}.
 *
 * <p>The codec handles READY, PING/PONG and ERROR itself and passes SUBSCRIBE/CANCEL on as
 * {@link ZmtpSubscription}s; other commands reach the application as user events.
 */
public final class ZmtpCommand {
  private final String name;
  private final Map<String, byte[]> properties; // READY, INITIATE (PLAIN)
  private final byte[] data; // topic, group, context, reason or raw data
  private final int ttl; // PING

  private ZmtpCommand(String name, Map<String, byte[]> properties, byte[] data, int ttl) {
    this.name = name;
    this.properties = properties;
    this.data = data;
    this.ttl = ttl;
  }

  /** @return a READY command with the given metadata (names map to values, in order) */
  public static ZmtpCommand ready(Map<String, byte[]> properties) {
    return new ZmtpCommand("READY", Collections.unmodifiableMap(new LinkedHashMap<>(properties)),
        null, 0);
  }

  /** @return a PLAIN client's INITIATE: its metadata, as in READY */
  static ZmtpCommand initiate(Map<String, byte[]> properties) {
    return new ZmtpCommand("INITIATE",
        Collections.unmodifiableMap(new LinkedHashMap<>(properties)), null, 0);
  }

  /** @return an ERROR command; the reason is cut to 255 bytes */
  public static ZmtpCommand error(String reason) {
    byte[] r = reason.getBytes(StandardCharsets.UTF_8);
    return new ZmtpCommand("ERROR", null, Arrays.copyOf(r, Math.min(255, r.length)), 0);
  }

  /** @return a PING with a TTL in deciseconds and a context of at most 16 bytes */
  public static ZmtpCommand ping(int ttlDeciseconds, byte[] context) {
    return new ZmtpCommand("PING", null, context.clone(), ttlDeciseconds & 0xFFFF);
  }

  /** @return a PONG echoing a PING's context */
  public static ZmtpCommand pong(byte[] context) {
    return new ZmtpCommand("PONG", null, context.clone(), 0);
  }

  /** @return any other command: a name and its raw data */
  public static ZmtpCommand of(String name, byte[] data) {
    return new ZmtpCommand(name, null, data.clone(), 0);
  }

  /** @return the command name, e.g. {@code READY} */
  public String name() {
    return name;
  }

  /** @return READY's (or a PLAIN INITIATE's) metadata; empty for other commands */
  public Map<String, byte[]> properties() {
    return properties == null ? Collections.emptyMap() : properties;
  }

  /** @return PING's TTL in deciseconds (0 for other commands) */
  public int ttl() {
    return ttl;
  }

  /**
   * @return the command's payload: the topic (SUBSCRIBE/CANCEL), group (JOIN/LEAVE), context
   *     (PING/PONG), reason (ERROR), or the raw data of another command; a copy
   */
  public byte[] data() {
    return data == null ? new byte[0] : data.clone();
  }

  /** @return ERROR's reason as text */
  public String reason() {
    return data == null ? "" : new String(data, StandardCharsets.UTF_8);
  }

  /**
   * Parses a command body (name length, name, data), as found in a command frame.
   *
   * @param body the frame body; read from its reader index, not moved
   * @return the command
   * @throws ZmtpException on a malformed command ({@code Empty}, {@code NameTruncated},
   *     {@code Truncated}, {@code Metadata}, {@code GroupTooLong}, {@code TrailingData})
   */
  public static ZmtpCommand parse(ByteBuf body) {
    int idx = body.readerIndex();
    int end = body.writerIndex();
    if (idx >= end) {
      throw new ZmtpException("Empty", "empty command frame");
    }
    int nl = body.getUnsignedByte(idx);
    if (nl == 0) {
      throw new ZmtpException("EmptyName", "command with an empty name");
    }
    if (idx + 1 + nl > end) {
      throw new ZmtpException("NameTruncated", "command name runs past the frame");
    }
    String name = body.toString(idx + 1, nl, StandardCharsets.US_ASCII);
    int p = idx + 1 + nl;
    int rest = end - p;
    switch (name) {
      case "READY":
      case "INITIATE":
        return new ZmtpCommand(name, Collections.unmodifiableMap(parseMetadata(body, p, end)), null, 0);
      case "PING": {
        if (rest < 2) {
          throw new ZmtpException("Truncated", "PING needs a 2-byte TTL");
        }
        if (rest - 2 > 16) {
          throw new ZmtpException("TrailingData", "PING context over 16 bytes");
        }
        return new ZmtpCommand(name, null, copy(body, p + 2, rest - 2), body.getUnsignedShort(p));
      }
      case "ERROR": {
        if (rest < 1) {
          throw new ZmtpException("Truncated", "ERROR needs a reason length");
        }
        int rl = body.getUnsignedByte(p);
        if (rl > rest - 1) {
          throw new ZmtpException("Truncated", "ERROR reason runs past the frame");
        }
        if (rl < rest - 1) {
          throw new ZmtpException("TrailingData", "bytes after the ERROR reason");
        }
        return new ZmtpCommand(name, null, copy(body, p + 1, rl), 0);
      }
      case "JOIN":
      case "LEAVE":
        if (rest > 255) {
          throw new ZmtpException("GroupTooLong", "group of " + rest + " bytes (at most 255)");
        }
        return new ZmtpCommand(name, null, copy(body, p, rest), 0);
      default:
        return new ZmtpCommand(name, null, copy(body, p, rest), 0);
    }
  }

  private static byte[] copy(ByteBuf b, int from, int len) {
    byte[] a = new byte[len];
    b.getBytes(from, a);
    return a;
  }

  private static Map<String, byte[]> parseMetadata(ByteBuf b, int p, int end) {
    Map<String, byte[]> m = new LinkedHashMap<>();
    while (p < end) {
      int nl = b.getUnsignedByte(p);
      if (nl == 0 || p + 1 + nl + 4 > end) {
        throw new ZmtpException("Metadata", "property name runs past the command");
      }
      String key = b.toString(p + 1, nl, StandardCharsets.US_ASCII);
      p += 1 + nl;
      long vl = b.getUnsignedInt(p);
      p += 4;
      if (vl > end - p) {
        throw new ZmtpException("Metadata", "property value runs past the command");
      }
      m.put(key, copy(b, p, (int) vl));
      p += (int) vl;
    }
    return m;
  }

  /** @return the size of the command body {@link #writeBody} writes */
  int bodySize() {
    int n = 1 + name.length();
    switch (name) {
      case "READY":
      case "INITIATE":
        for (Map.Entry<String, byte[]> e : properties.entrySet()) {
          n += 1 + e.getKey().length() + 4 + e.getValue().length;
        }
        return n;
      case "PING":
        return n + 2 + data.length;
      case "ERROR":
        return n + 1 + data.length;
      default:
        return n + data.length;
    }
  }

  /** Writes the command body (name length, name, data). */
  void writeBody(ByteBuf out) {
    out.writeByte(name.length());
    out.writeCharSequence(name, StandardCharsets.US_ASCII);
    switch (name) {
      case "READY":
      case "INITIATE":
        for (Map.Entry<String, byte[]> e : properties.entrySet()) {
          out.writeByte(e.getKey().length());
          out.writeCharSequence(e.getKey(), StandardCharsets.US_ASCII);
          out.writeInt(e.getValue().length);
          out.writeBytes(e.getValue());
        }
        break;
      case "PING":
        out.writeShort(ttl);
        out.writeBytes(data);
        break;
      case "ERROR":
        out.writeByte(data.length);
        out.writeBytes(data);
        break;
      default:
        out.writeBytes(data);
    }
  }

  /** Writes this command as a ZMTP 3.x command frame (header and body). */
  public void writeFrame(ByteBuf out) {
    int size = bodySize();
    ZmtpWire.write(ZmtpProtocol.ZMTP31, out, size, false, true);
    writeBody(out);
  }

  @Override
  public String toString() {
    return "ZmtpCommand{" + name + (properties != null ? " " + properties.keySet() : "") + "}";
  }
}
