package io.oxmq.netty.bench;

import java.util.concurrent.atomic.AtomicLong;

/** Warm up, then measure a counter over a fixed time; prints one RESULT line. */
final class BenchMeter {
  private BenchMeter() {}

  static void report(String mode, double warmupS, double measureS, AtomicLong ops,
      AtomicLong latencyNs, int concurrency) throws InterruptedException {
    Thread.sleep((long) (warmupS * 1000));
    long o0 = ops.get();
    long l0 = latencyNs.get();
    long t0 = System.nanoTime();
    Thread.sleep((long) (measureS * 1000));
    long o1 = ops.get();
    long l1 = latencyNs.get();
    long t1 = System.nanoTime();
    double rate = (o1 - o0) * 1e9 / (t1 - t0);
    double latUs;
    if (concurrency > 0) {
      latUs = rate > 0 ? concurrency / rate * 1e6 : 0;
    } else {
      latUs = o1 > o0 ? (l1 - l0) / 1000.0 / (o1 - o0) : 0;
    }
    System.out.printf("RESULT %s %.0f %.1f%n", mode, rate, latUs);
    System.out.flush();
  }
}
