package io.oxmq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/** Library-wide facts and the flags of send and receive calls. */
public final class Zmq {
    private Zmq() {}

    /** Send/receive flag: do not block; a send that cannot proceed returns {@code false}, a
     *  receive returns -1 or {@code null}. */
    public static final int DONTWAIT = 1;
    /** Send flag: more frames of this message follow. */
    public static final int SNDMORE = 2;

    /** Poll event: a message can be received. */
    public static final int POLLIN = 1;
    /** Poll event: a message can be sent. */
    public static final int POLLOUT = 2;
    /** Poll event: an error on a file descriptor. */
    public static final int POLLERR = 4;

    /** The loaded library's version as {@code {major, minor, patch}}. */
    public static int[] version() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment v = a.allocate(JAVA_INT, 3);
            Native.zmq_version.invokeExact(v.address(), v.address() + 4, v.address() + 8);
            return new int[] {v.getAtIndex(JAVA_INT, 0), v.getAtIndex(JAVA_INT, 1), v.getAtIndex(JAVA_INT, 2)};
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Which {@code libzmq.so.5} this process loaded (a path, or "bundled"). */
    public static String library() {
        return Native.LIBRARY_DESCRIPTION;
    }

    /**
     * The symbols of the {@code libzmq.so.5} this process loaded (chosen as {@link #library()}
     * reports; loaded on the first call into io.oxmq, this one included), for code that binds
     * further functions of the same library with the FFM API, such as oxmq's own extensions
     * beyond libzmq's ABI, without loading a second copy. A stable entry point: front ends
     * built on this binding rely on it.
     */
    public static SymbolLookup symbols() {
        return Native.LIB;
    }

    /** The library's text for {@code errno}. */
    public static String strerror(int errno) {
        try {
            long p = (long) Native.zmq_strerror.invokeExact(errno);
            return p == 0 ? "unknown error" : MemorySegment.ofAddress(p).reinterpret(4096).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Whether the library has a capability ("curve", "ipc", "draft", ...). */
    public static boolean has(String capability) {
        try (Arena a = Arena.ofConfined()) {
            return (int) Native.zmq_has.invokeExact(a.allocateFrom(capability).address()) != 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
