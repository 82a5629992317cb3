package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ZmtpWireTest {
  /**
   * The inline short-frame helpers agree with {@link ZmtpWire#parse} on every two-byte header:
   * a header they take is a data frame parse reads the same way, and one they leave is one parse
   * reads otherwise (long, command) or refuses.
   */
  @ParameterizedTest
  @CsvSource({"ZMTP31", "ZMTP20"})
  void shortDataHelpersAgreeWithParse(ZmtpProtocol v) {
    ByteBuf in = Unpooled.buffer(16);
    ZmtpWire.Header h = new ZmtpWire.Header();
    for (int fl = 0; fl <= 0xFFFF; fl++) {
      in.clear().writeShort(fl).writeZero(8);
      int len = ZmtpWire.shortDataLength(fl);
      if (len >= 0) {
        assertEquals(2, ZmtpWire.parse(v, in, 0, 255, false, h), "header " + fl);
        assertEquals(len, h.length);
        assertEquals(ZmtpWire.shortDataMore(fl), h.more);
        assertEquals(false, h.command);
        assertEquals(fl, ZmtpWire.shortDataHeader(len, h.more));
      } else {
        boolean shortData;
        try {
          shortData = ZmtpWire.parse(v, in, 0, Long.MAX_VALUE, false, h) == 2 && !h.command;
        } catch (ZmtpException e) {
          shortData = false;
        }
        assertEquals(false, shortData, "header " + fl + " is a short data frame to parse");
      }
    }
    in.release();
  }
}
