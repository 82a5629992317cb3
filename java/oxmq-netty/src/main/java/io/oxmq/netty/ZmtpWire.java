package io.oxmq.netty;

import io.netty.buffer.ByteBuf;

/** Frame headers of the three wire formats (1.0, 2.0, 3.x). Package-private, allocation-free. */
final class ZmtpWire {
  private ZmtpWire() {}

  /** The parsed header of one frame; reused by its owner. */
  static final class Header {
    /** Body length in bytes. */
    long length;
    boolean more;
    boolean command;
  }

  /**
   * Parses the frame header at {@code idx} of {@code in} without moving its reader index.
   *
   * @param lenientFlags accept any 1.0 flags octet (a 1.0 identity frame behind a signature
   *     carries 0x7F)
   * @return the header length, or 0 if more bytes are needed
   * @throws ZmtpException on a malformed header or a body over {@code max}
   */
  static int parse(ZmtpProtocol v, ByteBuf in, int idx, long max, boolean lenientFlags, Header h) {
    int avail = in.writerIndex() - idx;
    if (avail < 1) {
      return 0;
    }
    // 2.0/3.x: flags and a short frame's length in one read when both bytes are there.
    int fl = v != ZmtpProtocol.ZMTP10 && avail >= 2 ? in.getUnsignedShort(idx) : -1;
    int b0 = fl >= 0 ? fl >>> 8 : in.getUnsignedByte(idx);
    if (v == ZmtpProtocol.ZMTP10) {
      long len;
      int hl;
      if (b0 == 0xFF) {
        if (avail < 10) {
          return 0;
        }
        len = in.getLong(idx + 1);
        if (len < 0) {
          throw new ZmtpException("LengthOverflow", "1.0 frame length over 2^63-1");
        }
        hl = 10;
      } else {
        if (avail < 2 && b0 != 0) {
          return 0;
        }
        len = b0;
        hl = 2;
      }
      if (len == 0) {
        throw new ZmtpException("ZeroLength", "1.0 frame length 0 leaves no room for flags");
      }
      if (len - 1 > max) {
        throw new ZmtpException("TooLarge", "frame of " + (len - 1) + " bytes over the limit " + max);
      }
      int flags = in.getUnsignedByte(idx + hl - 1);
      if (!lenientFlags && (flags & ~0x01) != 0) {
        throw new ZmtpException("ReservedFlags", String.format("1.0 flags 0x%02x", flags));
      }
      h.length = len - 1;
      h.more = (flags & 1) != 0;
      h.command = false;
      return hl;
    }
    int reserved = v == ZmtpProtocol.ZMTP20 ? ~0x03 : ~0x07;
    if ((b0 & reserved) != 0) {
      throw new ZmtpException("ReservedFlags", String.format("flags 0x%02x", b0));
    }
    boolean command = (b0 & 0x04) != 0;
    boolean more = (b0 & 0x01) != 0;
    if (command && more) {
      throw new ZmtpException("CommandWithMore", "command frame with MORE");
    }
    long len;
    int hl;
    if ((b0 & 0x02) != 0) {
      if (avail < 9) {
        return 0;
      }
      len = in.getLong(idx + 1);
      if (len < 0) {
        throw new ZmtpException("LengthOverflow", "frame length over 2^63-1");
      }
      hl = 9;
    } else {
      if (avail < 2) {
        return 0;
      }
      len = fl & 0xFF;
      hl = 2;
    }
    if (len > max) {
      throw new ZmtpException("TooLarge", "frame of " + len + " bytes over the limit " + max);
    }
    h.length = len;
    h.more = more;
    h.command = command;
    return hl;
  }

  /**
   * The body length of a 2.0/3.x short data frame (flags 0 or MORE), given its two header bytes
   * as one big-endian unsigned short; -1 for any other header (long, command, reserved bits).
   * Small enough to inline where {@link #parse} is not.
   */
  static int shortDataLength(int flagsAndLength) {
    return (flagsAndLength & ~0x01FF) == 0 ? flagsAndLength & 0xFF : -1;
  }

  /** @return whether the short data frame header {@code flagsAndLength} has MORE */
  static boolean shortDataMore(int flagsAndLength) {
    return flagsAndLength > 0xFF;
  }

  /** The two header bytes of a 2.0/3.x short data frame of {@code len} (0 to 255) bytes. */
  static int shortDataHeader(int len, boolean more) {
    return more ? 0x100 | len : len;
  }

  /** @return the size of the header {@link #write} writes for a body of {@code len} bytes */
  static int headerSize(ZmtpProtocol v, long len) {
    if (v == ZmtpProtocol.ZMTP10) {
      return len + 1 < 255 ? 2 : 10;
    }
    return len <= 255 ? 2 : 9;
  }

  /** Writes a frame header for a body of {@code len} bytes. */
  static void write(ZmtpProtocol v, ByteBuf out, long len, boolean more, boolean command) {
    if (v == ZmtpProtocol.ZMTP10) {
      if (len + 1 < 255) {
        out.writeShort((int) ((len + 1) << 8) | (more ? 1 : 0));
      } else {
        out.writeByte(0xFF);
        out.writeLong(len + 1);
        out.writeByte(more ? 1 : 0);
      }
      return;
    }
    int flags = (more ? 1 : 0) | (command ? 4 : 0);
    if (len <= 255) {
      out.writeShort((flags << 8) | (int) len);
    } else {
      out.writeByte(flags | 2);
      out.writeLong(len);
    }
  }
}
