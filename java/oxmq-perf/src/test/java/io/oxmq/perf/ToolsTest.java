package io.oxmq.perf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Each pair of tools over tcp loopback, with Frames and with arrays: libzmq's output lines. */
@Timeout(60)
class ToolsTest {
    private static String endpoint() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return "tcp://127.0.0.1:" + s.getLocalPort();
        }
    }

    /** Runs {@code local} and {@code remote} in two threads; what both printed. */
    private static String pair(Runnable local, Runnable remote) throws Exception {
        PrintStream out = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        Throwable[] failed = new Throwable[2];
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            Thread l = Thread.ofPlatform().start(() -> run(local, failed, 0));
            Thread r = Thread.ofPlatform().start(() -> run(remote, failed, 1));
            l.join();
            r.join();
        } finally {
            System.setOut(out);
        }
        for (Throwable t : failed) {
            if (t != null) throw new AssertionError(t);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    private static void run(Runnable r, Throwable[] failed, int i) {
        try {
            r.run();
        } catch (Throwable t) {
            failed[i] = t;
        }
    }

    private static double value(String out, String key) {
        Matcher m = Pattern.compile(key + ": ([0-9.]+)").matcher(out);
        assertTrue(m.find(), "no '" + key + "' line in: " + out);
        return Double.parseDouble(m.group(1));
    }

    /** A pair's arguments: 100 B messages, {@code count} of them, in {@code mode}. */
    private static String[] args(String mode, String count) throws IOException {
        String ep = endpoint();
        return mode.equals("bytes") ? new String[] {ep, "100", count, "bytes"} : new String[] {ep, "100", count};
    }

    @ParameterizedTest
    @ValueSource(strings = {"frame", "bytes"})
    void throughputPair(String mode) throws Exception {
        String[] a = args(mode, "20000");
        String out = pair(() -> LocalThr.main(a), () -> RemoteThr.main(a));
        assertTrue(out.contains("message size: 100 [B]") && out.contains("message count: 20000"), out);
        assertTrue(value(out, "mean throughput") > 0, out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"frame", "bytes"})
    void latencyPair(String mode) throws Exception {
        String[] a = args(mode, "2000");
        String out = pair(() -> LocalLat.main(a), () -> RemoteLat.main(a));
        assertTrue(out.contains("roundtrip count: 2000"), out);
        assertTrue(value(out, "average latency") > 0, out);
    }
}
