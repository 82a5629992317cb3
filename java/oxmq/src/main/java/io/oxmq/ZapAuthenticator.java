package io.oxmq;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * A ZAP handler (RFC 27) in Java: a REP socket bound at {@code inproc://zeromq.zap.01} in the
 * context, served by a daemon thread that asks a {@link Handler} about each connection of a
 * socket with a security mechanism (PLAIN or CURVE server) or a ZAP domain. One per context.
 *
 * <pre>{@code
 * try (var auth = ZapAuthenticator.start(ctx, ZapAuthenticator.plain(Map.of("admin", "secret")))) {
 *     server.set(SocketOption.PLAIN_SERVER, true);
 *     ...
 * }
 * }</pre>
 */
public final class ZapAuthenticator implements AutoCloseable {
    /** The endpoint libzmq and oxmq send ZAP requests to. */
    public static final String ENDPOINT = "inproc://zeromq.zap.01";

    /**
     * One ZAP request.
     *
     * @param domain the server socket's ZAP domain
     * @param address the client's IP address
     * @param routingId the client's routing id
     * @param mechanism "NULL", "PLAIN" or "CURVE"
     * @param credentials the mechanism's credentials: PLAIN username and password; CURVE the
     *        client's 32-byte public key; NULL over tls:// or wss:// from a client that presented a
     *        verified certificate, that certificate's subject (oxmq's; NULL has none otherwise)
     */
    public record Request(String domain, String address, byte[] routingId, String mechanism, List<byte[]> credentials) {
        /** PLAIN's username ({@code null} for other mechanisms). */
        public String username() {
            return mechanism.equals("PLAIN") && !credentials.isEmpty() ? new String(credentials.get(0), StandardCharsets.UTF_8) : null;
        }

        /** PLAIN's password ({@code null} for other mechanisms). */
        public String password() {
            return mechanism.equals("PLAIN") && credentials.size() > 1 ? new String(credentials.get(1), StandardCharsets.UTF_8) : null;
        }

        /** The verified TLS client certificate's subject, RFC 4514 text as the
         *  {@code TLS-Peer-Subject} property gives it ({@code null} unless a NULL request came
         *  over tls:// or wss:// from a client with a certificate). */
        public String tlsSubject() {
            return mechanism.equals("NULL") && !credentials.isEmpty() ? new String(credentials.get(0), StandardCharsets.UTF_8) : null;
        }

        /** CURVE's client public key in Z85 ({@code null} for other mechanisms). */
        public String curvePublicKey() {
            return mechanism.equals("CURVE") && !credentials.isEmpty() && credentials.get(0).length == 32
                    ? Curve.z85Encode(credentials.get(0)) : null;
        }
    }

    /**
     * The answer to a request.
     *
     * @param allowed whether the connection may proceed
     * @param userId the user id the messages of this connection carry ("User-Id" property)
     */
    public record Decision(boolean allowed, String userId) {
        /** Allow, with user id {@code userId}. */
        public static Decision allow(String userId) {
            return new Decision(true, userId == null ? "" : userId);
        }

        /** Deny. */
        public static Decision deny() {
            return new Decision(false, "");
        }
    }

    /** Decides on requests; called on the authenticator's thread. */
    @FunctionalInterface
    public interface Handler {
        /** The decision for {@code request}. */
        Decision authenticate(Request request);
    }

    /** A handler for PLAIN that allows the given username → password pairs and denies the
     *  rest (other mechanisms: NULL allowed, CURVE denied). */
    public static Handler plain(Map<String, String> passwords) {
        Map<String, String> copy = Map.copyOf(passwords);
        return r -> switch (r.mechanism()) {
            case "PLAIN" -> r.password() != null && r.password().equals(copy.get(r.username()))
                    ? Decision.allow(r.username()) : Decision.deny();
            case "NULL" -> Decision.allow("");
            default -> Decision.deny();
        };
    }

    /** A handler for NULL over tls:// or wss:// that allows the clients whose certificate subject
     *  is one of {@code allowed}, each with its subject as the User-Id, and denies the rest
     *  (requests without a subject, and the other mechanisms, included). */
    public static Handler subjects(Set<String> allowed) {
        Set<String> copy = Set.copyOf(allowed);
        return r -> {
            String s = r.tlsSubject();
            return s != null && copy.contains(s) ? Decision.allow(s) : Decision.deny();
        };
    }

    /** A handler for CURVE that allows the given client public keys (Z85), or any key when
     *  {@code allowed} is {@code null}; other mechanisms: NULL allowed, PLAIN denied. */
    public static Handler curve(Set<String> allowed) {
        Set<String> copy = allowed == null ? null : Set.copyOf(allowed);
        return r -> switch (r.mechanism()) {
            case "CURVE" -> {
                String k = r.curvePublicKey();
                yield k != null && (copy == null || copy.contains(k)) ? Decision.allow(k) : Decision.deny();
            }
            case "NULL" -> Decision.allow("");
            default -> Decision.deny();
        };
    }

    private final Socket rep;
    private final Thread thread;
    private volatile boolean stop;
    private volatile Throwable failure;

    private ZapAuthenticator(Context ctx, Handler handler) throws InterruptedException {
        rep = ctx.socket(SocketType.REP);
        rep.set(SocketOption.LINGER, 0);
        CountDownLatch bound = new CountDownLatch(1);
        try {
            rep.bind(ENDPOINT);
        } catch (RuntimeException e) {
            rep.close();
            throw e;
        }
        thread = Thread.ofPlatform().daemon().name("oxmq-zap").unstarted(() -> serve(handler, bound));
        thread.start();
        bound.await();
    }

    /** Binds the handler socket and starts serving requests with {@code handler}. */
    public static ZapAuthenticator start(Context ctx, Handler handler) {
        try {
            return new ZapAuthenticator(ctx, handler);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ZmqInterruptedException("ZapAuthenticator.start");
        }
    }

    private void serve(Handler handler, CountDownLatch bound) {
        bound.countDown();
        try {
            while (!stop) {
                List<byte[]> frames = new ArrayList<>();
                try {
                    frames.add(rep.recv(0));
                } catch (ZmqInterruptedException e) {
                    break;
                }
                while (rep.hasReceiveMore()) frames.add(rep.recv(0));
                reply(handler, frames);
            }
        } catch (TermException e) {
            // context closed: the socket is closed already
        } catch (Throwable t) {
            failure = t;
        } finally {
            if (!rep.isClosed()) rep.tryCloseForContext();
        }
    }

    private void reply(Handler handler, List<byte[]> f) {
        String version = f.isEmpty() ? "" : str(f.get(0));
        byte[] requestId = f.size() > 1 ? f.get(1) : new byte[0];
        String status, text, user = "";
        if (!version.equals("1.0") || f.size() < 6) {
            status = "500";
            text = "malformed ZAP request";
        } else {
            Request r = new Request(str(f.get(2)), str(f.get(3)), f.get(4), str(f.get(5)),
                    List.copyOf(f.subList(6, f.size())));
            Decision d;
            try {
                d = handler.authenticate(r);
            } catch (RuntimeException e) {
                d = null;
            }
            if (d == null) {
                status = "500";
                text = "handler failed";
            } else if (d.allowed()) {
                status = "200";
                text = "OK";
                user = d.userId();
            } else {
                status = "400";
                text = "denied";
            }
        }
        rep.send("1.0", Zmq.SNDMORE);
        rep.send(requestId, Zmq.SNDMORE);
        rep.send(status, Zmq.SNDMORE);
        rep.send(text, Zmq.SNDMORE);
        rep.send(user, Zmq.SNDMORE);
        rep.send(new byte[0], 0);
    }

    private static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** What ended the serving thread abnormally, if anything. */
    public Throwable failure() {
        return failure;
    }

    /** Stops serving and closes the handler socket. Idempotent. */
    @Override
    public void close() {
        stop = true;
        thread.interrupt();
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
