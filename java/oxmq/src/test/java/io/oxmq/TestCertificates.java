package io.oxmq;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Certificates made with the openssl CLI, once per test JVM: two CAs ("Test CA", "Other CA"), a
 * server certificate of Test CA for IP:127.0.0.1 and DNS:localhost, and a client certificate of
 * Test CA; PEM text by file name ("ca.pem", "server.key", ...).
 */
final class TestCertificates {
    static final String SERVER_SUBJECT = "CN=server,O=oxmq tests";
    static final String CLIENT_SUBJECT = "CN=client,O=oxmq tests";

    private static Map<String, String> pem;

    private TestCertificates() {}

    static synchronized String get(String name) {
        if (pem == null) pem = make();
        String v = pem.get(name);
        if (v == null) throw new IllegalArgumentException(name);
        return v;
    }

    /** The server's certificate and key. */
    static void serve(Socket s) {
        s.set(SocketOption.WSS_CERT_PEM, get("server.pem"));
        s.set(SocketOption.WSS_KEY_PEM, get("server.key"));
    }

    /** The client's certificate and key. */
    static void present(Socket s) {
        s.set(SocketOption.WSS_CERT_PEM, get("client.pem"));
        s.set(SocketOption.WSS_KEY_PEM, get("client.key"));
    }

    private static Map<String, String> make() {
        try {
            Path dir = Files.createTempDirectory("oxmq-java-tls");
            try {
                openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                        "-subj", "/CN=Test CA", "-keyout", "ca.key", "-out", "ca.pem");
                openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                        "-subj", "/CN=Other CA", "-keyout", "other-ca.key", "-out", "other-ca.pem");
                for (String[] leaf : new String[][] {
                        {"server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"},
                        {"client", "extendedKeyUsage=clientAuth\n"}}) {
                    String n = leaf[0];
                    Files.writeString(dir.resolve(n + ".ext"), leaf[1]);
                    openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-subj", "/O=oxmq tests/CN=" + n, "-keyout", n + ".key", "-out", n + ".csr");
                    openssl(dir, "x509", "-req", "-in", n + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                            "-days", "2", "-extfile", n + ".ext", "-out", n + ".pem");
                }
                Map<String, String> r = new HashMap<>();
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path p : files.toList()) {
                        String f = p.getFileName().toString();
                        if (f.endsWith(".pem") || f.endsWith(".key")) r.put(f, Files.readString(p, StandardCharsets.US_ASCII));
                    }
                }
                return r;
            } finally {
                try (Stream<Path> files = Files.list(dir)) {
                    for (Path p : files.toList()) Files.delete(p);
                }
                Files.delete(dir);
            }
        } catch (IOException e) {
            throw new IllegalStateException("making test certificates", e);
        }
    }

    private static void openssl(Path dir, String... args) throws IOException {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("openssl " + String.join(" ", args) + " did not finish");
            }
            if (p.exitValue() != 0) throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
