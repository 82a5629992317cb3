package io.oxmq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** CurveZMQ keys ({@code zmq_curve_keypair}, {@code zmq_curve_public}) and Z85 text. */
public final class Curve {
    private Curve() {}

    /**
     * A CURVE key pair as 40-character Z85 strings.
     *
     * @param publicKey the public key
     * @param secretKey the secret key
     */
    public record KeyPair(String publicKey, String secretKey) {
        @Override
        public String toString() {
            return "KeyPair[publicKey=" + publicKey + ", secretKey=(hidden)]";
        }
    }

    /** A new random key pair. */
    public static KeyPair keyPair() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pub = a.allocate(41), sec = a.allocate(41);
            int rc = (int) Native.zmq_curve_keypair.invokeExact(pub.address(), sec.address());
            if (rc != 0) throw ZmqException.of("zmq_curve_keypair", Native.lastErrno());
            return new KeyPair(pub.getString(0), sec.getString(0));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The public key of a Z85 secret key. */
    public static String publicKey(String secretKey) {
        if (secretKey.length() != 40) throw new IllegalArgumentException("a Z85 key has 40 characters");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pub = a.allocate(41);
            int rc = (int) Native.zmq_curve_public.invokeExact(pub.address(), a.allocateFrom(secretKey).address());
            if (rc != 0) throw ZmqException.of("zmq_curve_public", Native.lastErrno());
            return pub.getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Z85-encodes {@code data} (its length a multiple of 4). */
    public static String z85Encode(byte[] data) {
        if (data.length % 4 != 0) throw new IllegalArgumentException("Z85 encodes multiples of 4 bytes");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment src = a.allocate(Math.max(1, data.length));
            MemorySegment.copy(data, 0, src, JAVA_BYTE, 0, data.length);
            MemorySegment dst = a.allocate(data.length * 5L / 4 + 1);
            long p = (long) Native.zmq_z85_encode.invokeExact(dst.address(), src.address(), (long) data.length);
            if (p == 0) throw new IllegalArgumentException("Z85 encoding failed");
            return dst.getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Decodes Z85 text (its length a multiple of 5). */
    public static byte[] z85Decode(String text) {
        if (text.length() % 5 != 0) throw new IllegalArgumentException("Z85 text has a multiple of 5 characters");
        try (Arena a = Arena.ofConfined()) {
            MemorySegment dst = a.allocate(Math.max(1, text.length() * 4L / 5));
            long p = (long) Native.zmq_z85_decode.invokeExact(dst.address(), a.allocateFrom(text).address());
            if (p == 0) throw new IllegalArgumentException("not Z85 text");
            return dst.asSlice(0, text.length() * 4L / 5).toArray(JAVA_BYTE);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
