package oxmqtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The draft socket types of the org.zeromq API (issue 44: SERVER/CLIENT with
 * {@code ZFrame.setRoutingId}, RADIO/DISH with {@code join} and {@code ZFrame.setGroup},
 * SCATTER/GATHER, CHANNEL, PEER with {@code connectPeer}) on oxmq against JeroMQ 0.6.0's. One
 * program, interop/peers/DraftPeer.java (also the Rust interop tests' JeroMQ peer), is compiled
 * against this module and against JeroMQ, and the two builds run against each other in two
 * JVMs, each side binding in turn.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DraftInteropTest {
    private static final long WAIT_S = 40;
    private static Path onOxmq, onJeromq;

    static Stream<Arguments> pairs() {
        // {binder scenario, connecter scenario, binder's extra arg, connecter's extra arg}
        String[][] p = {
            {"server", "client", "", ""},
            {"dish", "radio", "", ""},
            {"radio", "dish", "", ""},
            {"gather", "scatter", "", ""},
            {"scatter", "gather", "", ""},
            {"channel", "channel", "", "first"},
            {"peer", "peer", "", ""},
        };
        List<Arguments> l = new ArrayList<>();
        for (String[] s : p) {
            l.add(Arguments.of(s[0], s[1], s[2], s[3], "oxmq"));
            l.add(Arguments.of(s[0], s[1], s[2], s[3], "JeroMQ"));
        }
        return l.stream();
    }

    /** DraftPeer compiled against {@code classPath} (once per API). */
    private static synchronized Path compile(String classPath, String what) throws IOException {
        Path out = Files.createTempDirectory("draftpeer-" + what);
        Path src = Path.of(System.getProperty("draft.peer", "../../interop/peers/DraftPeer.java"));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = javac.run(null, err, err, "-d", out.toString(), "-cp", classPath, "-Xlint:none", src.toString());
        if (rc != 0) throw new IOException("DraftPeer does not compile against " + what + ":\n" + err);
        return out;
    }

    /** A DraftPeer in its own JVM, on oxmq or on JeroMQ; its output by line. */
    static final class Peer implements AutoCloseable {
        final Process p;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final String endpoint;

        Peer(boolean oxmq, String scenario, String mode, String ep, String extra) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> cmd = new ArrayList<>(List.of(java));
            if (oxmq) {
                if (onOxmq == null) onOxmq = compile(System.getProperty("java.class.path"), "oxmq");
                cmd.addAll(List.of("--enable-native-access=ALL-UNNAMED", "-cp",
                        onOxmq + File.pathSeparator + System.getProperty("java.class.path")));
            } else {
                if (onJeromq == null) onJeromq = compile(JeroMQ.classPath(), "JeroMQ");
                cmd.addAll(List.of("-cp", onJeromq + File.pathSeparator + JeroMQ.classPath()));
            }
            cmd.addAll(List.of("DraftPeer", scenario, mode, ep));
            if (!extra.isEmpty()) cmd.add(extra);
            p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Thread t = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l; (l = r.readLine()) != null; ) lines.add(l);
                } catch (IOException e) {
                    // the process ended
                }
                lines.add("EOF");
            });
            t.setDaemon(true);
            t.start();
            String ready = line();
            assertTrue(ready.startsWith("READY "), (oxmq ? "oxmq" : "JeroMQ") + " " + scenario + ": " + ready);
            endpoint = ready.substring("READY ".length());
        }

        String line() throws InterruptedException {
            String l = lines.poll(WAIT_S, TimeUnit.SECONDS);
            if (l == null) throw new AssertionError("peer silent for " + WAIT_S + " s");
            return l;
        }

        /** Reads lines until OK; returns the RECV lines seen. */
        List<String> untilOk(String who) throws InterruptedException {
            List<String> recv = new ArrayList<>();
            for (String l; !(l = line()).equals("OK"); ) {
                assertTrue(l.startsWith("RECV "), who + ": " + l);
                recv.add(l);
            }
            return recv;
        }

        @Override
        public void close() {
            p.destroyForcibly();
        }
    }

    @ParameterizedTest(name = "{0} binds on {4}, {1} connects on the other")
    @MethodSource("pairs")
    void draftTypes(String bindScenario, String connectScenario, String bindExtra, String connectExtra, String binderImpl)
            throws Exception {
        boolean oxmqBinds = binderImpl.equals("oxmq");
        try (Peer binder = new Peer(oxmqBinds, bindScenario, "bind", "tcp://127.0.0.1:*", bindExtra);
             Peer connecter = new Peer(!oxmqBinds, connectScenario, "connect", binder.endpoint, connectExtra)) {
            Peer radio = bindScenario.equals("radio") ? binder : connectScenario.equals("radio") ? connecter : null;
            Peer dish = radio == binder ? connecter : radio == connecter ? binder : null;
            if (radio != null) {
                // The radio sends to g1 and g2 in turn; the dish, joined to g1, must hear g1
                // only (20 messages suffice; the radio stops when its stdin closes).
                int ticks = 0;
                while (ticks < 20) {
                    String l = dish.line();
                    assertTrue(l.startsWith("RECV g1 tick"), "only g1 reaches the dish: " + l);
                    ticks++;
                }
                radio.p.getOutputStream().close();
                return;
            }
            assertEquals(List.of(), binder.untilOk("binder"));
            assertEquals(List.of(), connecter.untilOk("connecter"));
        }
    }
}
