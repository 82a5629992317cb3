package org.zeromq;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** A CURVE certificate, as JeroMQ's ZCert: a key pair (or a public key) and metadata. */
public class ZCert {
    private final String publicKey;
    private final String secretKey;
    private final Map<String, String> meta = new LinkedHashMap<>();

    /** A new random key pair. */
    public ZCert() {
        ZMQ.Curve.KeyPair kp = ZMQ.Curve.generateKeyPair();
        this.publicKey = kp.publicKey;
        this.secretKey = kp.secretKey;
    }

    /** A certificate of a public key (Z85) only. */
    public ZCert(String publicKey) {
        this(publicKey, null);
    }

    /** A certificate of a Z85 key pair. */
    public ZCert(String publicKey, String secretKey) {
        if (publicKey == null || publicKey.length() != 40) throw new IllegalArgumentException("public key must be 40 Z85 characters");
        this.publicKey = publicKey;
        this.secretKey = secretKey;
    }

    /** A certificate of a raw key pair. */
    public ZCert(byte[] publicKey, byte[] secretKey) {
        this(ZMQ.Curve.z85Encode(publicKey), secretKey == null ? null : ZMQ.Curve.z85Encode(secretKey));
    }

    /** The raw public key. */
    public byte[] getPublicKey() {
        return ZMQ.Curve.z85Decode(publicKey);
    }

    /** The raw secret key ({@code null} for a public certificate). */
    public byte[] getSecretKey() {
        return secretKey == null ? null : ZMQ.Curve.z85Decode(secretKey);
    }

    /** The public key in Z85. */
    public String getPublicKeyAsZ85() {
        return publicKey;
    }

    /** The secret key in Z85. */
    public String getSecretKeyAsZ85() {
        return secretKey;
    }

    /** Sets a metadata entry. */
    public void setMeta(String key, String value) {
        meta.put(key, value);
    }

    /** A metadata entry. */
    public String getMeta(String key) {
        return meta.get(key);
    }

    /** Sets this certificate's keys on {@code socket} (as a CURVE client or server's own keys). */
    public void apply(ZMQ.Socket socket) {
        socket.setCurvePublicKey(publicKey.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        if (secretKey != null) socket.setCurveSecretKey(secretKey.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    private String zpl(boolean withSecret) {
        StringBuilder b = new StringBuilder("#   ZeroMQ CURVE ").append(withSecret ? "**Secret** " : "Public ").append("Certificate\n");
        b.append("metadata\n");
        meta.forEach((k, v) -> b.append("    ").append(k).append(" = \"").append(v).append("\"\n"));
        b.append("curve\n    public-key = \"").append(publicKey).append("\"\n");
        if (withSecret && secretKey != null) b.append("    secret-key = \"").append(secretKey).append("\"\n");
        return b.toString();
    }

    /** Writes the public certificate (ZPL). */
    public void savePublic(String filename) throws IOException {
        Files.writeString(Path.of(filename), zpl(false));
    }

    /** Writes the secret certificate (ZPL). */
    public void saveSecret(String filename) throws IOException {
        Files.writeString(Path.of(filename), zpl(true));
    }

    /** Reads the public key (Z85) of a certificate file, or {@code null}. */
    static String readPublicKey(Path file) {
        try {
            for (String line : Files.readAllLines(file)) {
                String t = line.trim();
                if (t.startsWith("public-key")) {
                    int a = t.indexOf('"'), z = t.lastIndexOf('"');
                    if (a >= 0 && z > a) return t.substring(a + 1, z);
                }
            }
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
