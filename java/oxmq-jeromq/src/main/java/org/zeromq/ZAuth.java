package org.zeromq;

import io.oxmq.ZapAuthenticator;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * JeroMQ's ZAuth on oxmq's ZAP handler ({@link ZapAuthenticator}): IP allow/deny lists,
 * PLAIN with a password file ({@code user=password} lines), CURVE with a directory of public
 * certificates or {@link #CURVE_ALLOW_ANY}.
 */
public class ZAuth implements Closeable {
    /** Allow any CURVE client key. */
    public static final String CURVE_ALLOW_ANY = "*";

    private final ZapAuthenticator auth;
    private final Set<String> allowed = ConcurrentHashMap.newKeySet();
    private final Set<String> denied = ConcurrentHashMap.newKeySet();
    private volatile Map<String, String> passwords = Map.of();
    private volatile String curveLocation;
    private volatile Set<String> curveKeys = Set.of();
    private volatile boolean verbose;

    /** Starts authenticating connections of {@code ctx}'s sockets. */
    public ZAuth(ZContext ctx) {
        this(ctx, "ZAuth");
    }

    /** Starts authenticating; {@code actorName} is kept for API compatibility. */
    public ZAuth(ZContext ctx, String actorName) {
        auth = ZapAuthenticator.start(ctx.getContext().ctx, this::decide);
    }

    private ZapAuthenticator.Decision decide(ZapAuthenticator.Request r) {
        ZapAuthenticator.Decision d = decideInner(r);
        if (verbose) System.out.printf("ZAuth: %s %s from %s: %s%n", r.mechanism(), r.domain(), r.address(), d.allowed() ? "allowed" : "denied");
        return d;
    }

    private ZapAuthenticator.Decision decideInner(ZapAuthenticator.Request r) {
        if (!allowed.isEmpty() && !allowed.contains(r.address())) return ZapAuthenticator.Decision.deny();
        if (allowed.isEmpty() && denied.contains(r.address())) return ZapAuthenticator.Decision.deny();
        switch (r.mechanism()) {
            case "NULL":
                return ZapAuthenticator.Decision.allow("");
            case "PLAIN": {
                String pw = passwords.get(r.username());
                return pw != null && pw.equals(r.password()) ? ZapAuthenticator.Decision.allow(r.username()) : ZapAuthenticator.Decision.deny();
            }
            case "CURVE": {
                String key = r.curvePublicKey();
                String loc = curveLocation;
                if (key == null || loc == null) return ZapAuthenticator.Decision.deny();
                return CURVE_ALLOW_ANY.equals(loc) || curveKeys.contains(key) ? ZapAuthenticator.Decision.allow(key) : ZapAuthenticator.Decision.deny();
            }
            default:
                return ZapAuthenticator.Decision.deny();
        }
    }

    /** Prints each decision. */
    public ZAuth setVerbose(boolean verbose) {
        this.verbose = verbose;
        return this;
    }

    /** Allows only the listed addresses (once any is allowed). */
    public ZAuth allow(String address) {
        allowed.add(address);
        return this;
    }

    /** Denies an address (when no allow list is set). */
    public ZAuth deny(String address) {
        denied.add(address);
        return this;
    }

    /** PLAIN: reads {@code user=password} lines from {@code filename}. */
    public ZAuth configurePlain(String domain, String filename) {
        try {
            Map<String, String> m = new ConcurrentHashMap<>();
            for (String line : Files.readAllLines(Path.of(filename))) {
                String t = line.trim();
                int eq = t.indexOf('=');
                if (t.isEmpty() || t.startsWith("#") || eq <= 0) continue;
                m.put(t.substring(0, eq).trim(), t.substring(eq + 1).trim());
            }
            passwords = m;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** CURVE: {@link #CURVE_ALLOW_ANY}, or a directory of public certificates allowed. */
    public ZAuth configureCurve(String location) {
        if (!CURVE_ALLOW_ANY.equals(location)) {
            Set<String> keys = ConcurrentHashMap.newKeySet();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of(location))) {
                for (Path p : ds) {
                    if (!Files.isRegularFile(p)) continue;
                    String k = ZCert.readPublicKey(p);
                    if (k != null) keys.add(k);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            curveKeys = keys;
        }
        curveLocation = location;
        return this;
    }

    /** Stops the handler. */
    @Override
    public void close() {
        auth.close();
    }
}
