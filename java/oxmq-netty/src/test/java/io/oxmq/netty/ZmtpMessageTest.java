package io.oxmq.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The message's own reference count: Netty's contract, and its frames freed exactly once. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ZmtpMessageTest {
  @Test
  void countsLikeNettysObjectsAndFreesItsFramesAtZero() {
    ByteBuf a = Unpooled.copiedBuffer(new byte[] {1, 2});
    ByteBuf b = Unpooled.copiedBuffer(new byte[] {3});
    ZmtpMessage m = ZmtpMessage.wrap(a, b);
    assertEquals(1, m.refCnt());
    assertSame(m, m.retain(2));
    assertEquals(3, m.refCnt());
    assertFalse(m.release(2));
    assertEquals(1, a.refCnt(), "frames untouched while the message lives");
    assertTrue(m.release());
    assertEquals(0, m.refCnt());
    assertEquals(0, a.refCnt());
    assertEquals(0, b.refCnt());
  }

  @Test
  void aReleasedMessageRefusesRetainAndRelease() {
    ZmtpMessage m = ZmtpMessage.fromUtf8("x");
    m.release();
    assertThrows(IllegalReferenceCountException.class, m::retain);
    assertEquals(0, m.refCnt(), "a refused retain leaves the count as it was");
    assertThrows(IllegalReferenceCountException.class, m::release);
  }

  @Test
  void releasingMoreThanIsHeldIsRefusedAndChangesNothing() {
    ByteBuf f = Unpooled.copiedBuffer(new byte[] {1});
    ZmtpMessage m = ZmtpMessage.wrap(f).retain();
    assertThrows(IllegalReferenceCountException.class, () -> m.release(3));
    assertEquals(2, m.refCnt());
    assertEquals(1, f.refCnt());
    assertThrows(IllegalArgumentException.class, () -> m.release(0));
    assertThrows(IllegalArgumentException.class, () -> m.retain(-1));
    assertThrows(IllegalReferenceCountException.class, () -> m.retain(Integer.MAX_VALUE));
    assertEquals(2, m.refCnt(), "an overflowing retain is undone");
    assertTrue(m.release(2));
    assertEquals(0, f.refCnt());
  }

  @Test
  void referencesReleasedOnManyThreadsFreeTheFramesOnce() throws Exception {
    final int threads = 4;
    final int each = 50_000;
    for (int round = 0; round < 20; round++) {
      ByteBuf f = Unpooled.copiedBuffer(new byte[] {7});
      ZmtpMessage m = ZmtpMessage.wrap(f).retain(threads * each - 1);
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> ts = new ArrayList<>();
      int[] last = new int[threads];
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (int t = 0; t < threads; t++) {
        final int id = t;
        Thread th = new Thread(() -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            return;
          }
          try {
            for (int i = 0; i < each; i++) {
              if (m.release()) {
                last[id]++;
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        th.start();
        ts.add(th);
      }
      go.countDown();
      for (Thread th : ts) {
        th.join();
      }
      assertEquals(null, failure.get());
      int sum = 0;
      for (int n : last) {
        sum += n;
      }
      assertEquals(1, sum, "exactly one release is the last");
      assertEquals(0, m.refCnt());
      assertEquals(0, f.refCnt(), "the frame was released once (a second release would throw)");
    }
  }
}
