package oxmqtest;

import java.io.File;
import java.io.IOException;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * JeroMQ 0.6.0 as a second implementation: the guide sources compiled against its jar (copied
 * to {@code jeromq.dir} by the build, never on this JVM's class path) and a command line that
 * runs {@code guide.Run} on it in another JVM.
 */
final class JeroMQ {
    private static Path classes;
    private static String diagnostics = "";

    private JeroMQ() {
    }

    /** The jars: JeroMQ and jnacl (its CURVE crypto). */
    static String classPath() throws IOException {
        Path dir = Path.of(System.getProperty("jeromq.dir", "target/jeromq"));
        List<String> jars = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> p.toString().endsWith(".jar")).forEach(p -> jars.add(p.toString()));
        }
        if (jars.stream().noneMatch(j -> j.contains("jeromq-"))) throw new IOException("no JeroMQ jar in " + dir);
        return String.join(File.pathSeparator, jars);
    }

    /** Compiles src/test/java/guide against JeroMQ once; the output directory, or null when
     *  compilation failed ({@link #diagnostics()} says why). */
    static synchronized Path guideClasses() throws IOException {
        if (classes != null || !diagnostics.isEmpty()) return classes;
        Path out = Files.createTempDirectory("guide-on-jeromq");
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), "-cp", classPath(), "-Xlint:none"));
        try (Stream<Path> s = Files.list(Path.of(System.getProperty("guide.sources", "src/test/java/guide")))) {
            s.filter(p -> p.toString().endsWith(".java")).forEach(p -> args.add(p.toString()));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = javac.run(null, err, err, args.toArray(new String[0]));
        if (rc == 0) classes = out;
        else diagnostics = err.size() == 0 ? "javac exit " + rc : err.toString();
        return classes;
    }

    static String diagnostics() {
        return diagnostics;
    }

    /** {@code java -cp <guide on JeroMQ>:<jars> guide.Run <args>}. */
    static List<String> command(String... args) throws IOException {
        Path c = guideClasses();
        if (c == null) throw new IOException("guide sources do not compile against JeroMQ:\n" + diagnostics);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", c + File.pathSeparator + classPath(), "guide.Run"));
        cmd.addAll(List.of(args));
        return cmd;
    }
}
