package io.oxmq.perf;

/** Command-line parsing and the output lines shared by the tools (libzmq's formats). */
public final class Args {
    private Args() {}

    /** Exits with the usage line unless there are {@code n} arguments. */
    public static void need(String[] args, int n, String usage) {
        if (args.length != n) {
            System.out.println("usage: " + usage);
            System.exit(1);
        }
    }

    /**
     * The optional last argument {@code bytes}: the tool sends from and receives into Java
     * arrays (one call per message each way, the library copying between the heap and its
     * buffers) instead of {@link io.oxmq.Frame}s. Exits with the usage line (which gains
     * {@code [bytes]}) unless there are {@code n} arguments, or {@code n} and that one.
     */
    public static boolean bytesMode(String[] args, int n, String usage) {
        if (args.length == n + 1 && args[n].equals("bytes")) return true;
        need(args, n, usage + " [bytes]");
        return false;
    }

    /** A received message's size, checked: exits the tool through an exception otherwise. */
    public static void check(long got, int size) {
        if (got != size) throw new IllegalStateException("message of wrong size: " + got + ", not " + size);
    }

    /** A positive count argument. */
    public static int count(String s, String what) {
        try {
            long v = Long.parseLong(s);
            if (v <= 0 || v > Integer.MAX_VALUE) throw new NumberFormatException();
            return (int) v;
        } catch (NumberFormatException e) {
            System.err.println("error in " + what + ": not a positive number: " + s);
            System.exit(1);
            return 0;
        }
    }

    /**
     * Messages (throughput) or round trips (latency) each tool runs before it starts timing,
     * from {@code -Dperf.warmup=N}; 0 (the default) times from the first message, as libzmq's
     * tools do. A JVM runs its first thousands of calls in the interpreter, so without it a
     * short run measures the JIT as much as the library. Both tools of a pair must get the
     * same N: the sender sends N more messages, the receiver leaves N out of its clock.
     */
    public static int warmup() {
        String v = System.getProperty("perf.warmup", "0");
        try {
            int n = Integer.parseInt(v);
            if (n < 0) throw new NumberFormatException();
            return n;
        } catch (NumberFormatException e) {
            System.err.println("error in -Dperf.warmup: not a count: " + v);
            System.exit(1);
            return 0;
        }
    }

    /** libzmq's throughput lines: count over the time of the last count-1 messages (µs). */
    public static void throughput(int size, int count, double elapsedUs) {
        if (elapsedUs <= 0) elapsedUs = 1;
        double thr = count / elapsedUs * 1_000_000.0;
        double mbps = thr * size * 8 / 1_000_000.0;
        System.out.printf("message size: %d [B]%n", size);
        System.out.printf("message count: %d%n", count);
        System.out.printf("mean throughput: %d [msg/s]%n", (long) thr);
        System.out.printf("mean throughput: %.3f [Mb/s]%n", mbps);
    }

    /** libzmq's latency lines: half the mean round trip (µs). */
    public static void latency(int size, int roundtrips, double elapsedUs) {
        System.out.printf("message size: %d [B]%n", size);
        System.out.printf("roundtrip count: %d%n", roundtrips);
        System.out.printf("average latency: %.3f [us]%n", elapsedUs / (2.0 * roundtrips));
    }
}
