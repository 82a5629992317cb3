package io.oxmq.wiring.perf;

/** Argument parsing and libzmq's output lines, shared by the wiring perf tools. */
final class Perf {
    private Perf() {}

    static void need(String[] args, int n, String usage) {
        if (args.length != n) {
            System.out.println("usage: " + usage);
            System.exit(1);
        }
    }

    /**
     * The arguments before an optional last one, {@code frame}: the tool then sends and
     * receives {@link io.oxmq.Frame}s (no copy, as the socket tools do) instead of arrays.
     * Returns whether it was given; exits with the usage on any other count.
     */
    static boolean frameMode(String[] args, int n, String usage) {
        if (args.length == n + 1 && args[n].equals("frame")) {
            return true;
        }
        need(args, n, usage + " [frame]");
        return false;
    }

    static int count(String s, String what) {
        try {
            int v = Integer.parseInt(s);
            if (v > 0) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        System.err.println("error in " + what + ": not a positive number: " + s);
        System.exit(1);
        return 0;
    }

    /**
     * Untimed messages (or round trips) before the timed ones, from {@code -Dperf.warmup=N}; 0
     * (the default) times from the first message, as libzmq's tools do. Both tools of a pair
     * must get the same N: the sender sends N more, the receiver leaves N out of its clock
     * (io.oxmq.perf's tools take the same property).
     */
    static int warmup() {
        String v = System.getProperty("perf.warmup", "0");
        try {
            int n = Integer.parseInt(v);
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        System.err.println("error in -Dperf.warmup: not a count: " + v);
        System.exit(1);
        return 0;
    }

    static void check(int got, int size) {
        if (got != size) {
            throw new IllegalStateException("message of " + got + " bytes, expected " + size);
        }
    }

    static void throughput(int size, int count, double elapsedUs) {
        double thr = count / (elapsedUs / 1e6);
        System.out.printf("message size: %d [B]%n", size);
        System.out.printf("message count: %d%n", count);
        System.out.printf("mean throughput: %d [msg/s]%n", (long) thr);
        System.out.printf("mean throughput: %.3f [Mb/s]%n", thr * size * 8 / 1e6);
    }

    static void latency(int size, int roundtrips, double elapsedUs) {
        System.out.printf("message size: %d [B]%n", size);
        System.out.printf("roundtrip count: %d%n", roundtrips);
        System.out.printf("average latency: %.3f [us]%n", elapsedUs / (2.0 * roundtrips));
    }
}
