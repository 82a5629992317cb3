package io.oxmq.netty;

import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * Gathers flushes: {@link #flush()} does not flush at once but schedules one flush on the
 * channel's event loop, which runs after everything already queued there (typically after all
 * messages of the current read). Many {@code write} + {@code flush()} pairs thus become one
 * system call. On the event loop, every {@code maxPending}-th call flushes at once, which bounds
 * the bytes held back.
 */
public final class ZmtpBatchFlusher {
  private static final AtomicIntegerFieldUpdater<ZmtpBatchFlusher> SCHEDULED =
      AtomicIntegerFieldUpdater.newUpdater(ZmtpBatchFlusher.class, "scheduled");

  private final Channel channel;
  private final EventLoop loop;
  private final int maxPending;
  private final Runnable task = this::run;
  private volatile int scheduled;
  private int pending; // event-loop only
  private Thread loopThread; // the loop's thread, once seen: a loop keeps its thread for life

  /**
   * @param channel the channel to flush; at most 256 flushes are gathered, as with Netty's
   *     FlushConsolidationHandler
   */
  public ZmtpBatchFlusher(Channel channel) {
    this(channel, 256);
  }

  /**
   * @param channel the channel to flush
   * @param maxPending flush at once on the event loop after this many gathered calls
   */
  public ZmtpBatchFlusher(Channel channel, int maxPending) {
    if (maxPending < 1) {
      throw new IllegalArgumentException("maxPending < 1");
    }
    this.channel = channel;
    this.loop = channel.eventLoop();
    this.maxPending = maxPending;
  }

  /** Requests a flush; thread-safe. */
  public void flush() {
    if (onLoop() && ++pending >= maxPending) {
      pending = 0;
      channel.flush();
      return;
    }
    if (scheduled == 0 && SCHEDULED.compareAndSet(this, 0, 1)) {
      loop.execute(task);
    }
  }

  private boolean onLoop() {
    Thread t = Thread.currentThread();
    if (t == loopThread) {
      return true;
    }
    if (loopThread == null && loop.inEventLoop()) {
      loopThread = t;
      return true;
    }
    return false;
  }

  private void run() {
    scheduled = 0;
    pending = 0;
    channel.flush();
  }
}
