package io.oxmq;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The downcall handles into {@code libzmq.so.5}, and nothing else: every native call of the
 * binding goes through a handle declared here.
 *
 * <p>Conventions: native pointers the binding owns (sockets, contexts, {@code zmq_msg_t}s, pooled
 * buffers) are passed as {@code long} addresses, so a call never wraps them in a new
 * {@link MemorySegment}; only Java heap arrays travel as segments, and only through the
 * {@code critical} handles ({@link Linker.Option#critical(boolean)} with heap access), which are
 * used for non-blocking calls alone. A failed call's errno is read with {@code zmq_errno()}
 * right after it (see {@link #lastErrno()}).
 *
 * <p>The library is chosen once, on first use: the system property {@code oxmq.library} or the
 * environment variable {@code OXMQ_LIBRARY} may name a {@code libzmq.so.5} file (any libzmq 4.x,
 * Debian's included), or say {@code system} to let the dynamic loader find {@code libzmq.so.5};
 * otherwise the copy of oxmq's library inside the jar is extracted to a temporary directory
 * and loaded.
 */
final class Native {
    private Native() {}

    static final Linker LINKER = Linker.nativeLinker();
    static final String LIBRARY_DESCRIPTION;
    static final SymbolLookup LIB;

    static {
        String chosen = System.getProperty("oxmq.library");
        if (chosen == null || chosen.isBlank()) chosen = System.getenv("OXMQ_LIBRARY");
        try {
            if (chosen != null && !chosen.isBlank()) {
                if (chosen.equals("system")) {
                    LIB = SymbolLookup.libraryLookup("libzmq.so.5", Arena.global());
                    LIBRARY_DESCRIPTION = "libzmq.so.5 (dynamic loader's search path)";
                } else {
                    LIB = SymbolLookup.libraryLookup(Path.of(chosen), Arena.global());
                    LIBRARY_DESCRIPTION = chosen;
                }
            } else {
                Path p = extractBundled();
                LIB = SymbolLookup.libraryLookup(p, Arena.global());
                LIBRARY_DESCRIPTION = "oxmq (bundled, extracted to " + p + ")";
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new ExceptionInInitializerError(new IllegalStateException(
                    "oxmq: cannot load libzmq.so.5 (" + (chosen == null ? "bundled copy" : chosen)
                            + "): " + e.getMessage(), e));
        }
    }

    private static Path extractBundled() throws IOException {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new IOException("the jar carries libzmq.so.5 for linux-x86_64 only (this is "
                    + os + "-" + arch + "); set -Doxmq.library=/path/to/libzmq.so.5");
        }
        try (InputStream in = Native.class.getResourceAsStream("native/linux-x86_64/libzmq.so.5")) {
            if (in == null) {
                throw new IOException("native/linux-x86_64/libzmq.so.5 is not in the jar; "
                        + "set -Doxmq.library=/path/to/libzmq.so.5");
            }
            Path dir = Files.createTempDirectory("oxmq-native-");
            Path lib = dir.resolve("libzmq.so.5");
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
            // The mapping stays valid after the file is unlinked; remove both at exit.
            lib.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            return lib;
        }
    }

    private static final MethodHandle zmq_errno = h("zmq_errno", FunctionDescriptor.of(JAVA_INT), Linker.Option.critical(false));

    /**
     * The errno of this thread's last failed call, read right after the call. oxmq keeps it in
     * a thread-local of its own, so nothing the JVM does in between can change it; with
     * another libzmq it is C's errno, which the JVM does not touch between two downcalls on
     * one thread in practice. (Linker.Option.captureCallState would be exact everywhere, but
     * costs an allocation per call here, which the zero-allocation receive path cannot take.)
     */
    static int lastErrno() {
        try {
            return (int) zmq_errno.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** A segment over the whole address space, for reading native memory at an address without
     *  creating a segment per access. Bounds are checked by the callers. */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    // ---- handles ---------------------------------------------------------------------------

    private static MethodHandle h(String name, FunctionDescriptor fd, Linker.Option... opts) {
        MemorySegment sym = LIB.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError("oxmq: " + LIBRARY_DESCRIPTION + " has no symbol " + name));
        return LINKER.downcallHandle(sym, fd, opts);
    }

    private static MethodHandle hOpt(String name, FunctionDescriptor fd, Linker.Option... opts) {
        return LIB.find(name).map(sym -> LINKER.downcallHandle(sym, fd, opts)).orElse(null);
    }

    private static final Linker.Option CRIT_HEAP = Linker.Option.critical(true);
    private static final Linker.Option CRIT = Linker.Option.critical(false);

    static final ValueLayout.OfLong PTR = JAVA_LONG; // native pointers travel as addresses

    static final MethodHandle zmq_version = h("zmq_version", FunctionDescriptor.ofVoid(PTR, PTR, PTR));
    static final MethodHandle zmq_strerror = h("zmq_strerror", FunctionDescriptor.of(PTR, JAVA_INT));
    static final MethodHandle zmq_has = h("zmq_has", FunctionDescriptor.of(JAVA_INT, PTR));

    static final MethodHandle zmq_ctx_new = h("zmq_ctx_new", FunctionDescriptor.of(PTR));
    static final MethodHandle zmq_ctx_term = h("zmq_ctx_term", FunctionDescriptor.of(JAVA_INT, PTR));
    static final MethodHandle zmq_ctx_shutdown = h("zmq_ctx_shutdown", FunctionDescriptor.of(JAVA_INT, PTR));
    static final MethodHandle zmq_ctx_set = h("zmq_ctx_set", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, JAVA_INT));
    static final MethodHandle zmq_ctx_get = h("zmq_ctx_get", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT));
    /** oxmq's metrics text; null on another libzmq. */
    static final MethodHandle oxmq_ctx_metrics = hOpt("oxmq_ctx_metrics", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_LONG, JAVA_INT));

    static final MethodHandle zmq_socket = h("zmq_socket", FunctionDescriptor.of(PTR, PTR, JAVA_INT));
    static final MethodHandle zmq_close = h("zmq_close", FunctionDescriptor.of(JAVA_INT, PTR));
    static final MethodHandle zmq_setsockopt = h("zmq_setsockopt", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, PTR, JAVA_LONG));
    static final MethodHandle zmq_getsockopt = h("zmq_getsockopt", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_bind = h("zmq_bind", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_connect = h("zmq_connect", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_unbind = h("zmq_unbind", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_disconnect = h("zmq_disconnect", FunctionDescriptor.of(JAVA_INT, PTR, PTR));

    /** zmq_send / zmq_recv from/into native memory, may block. */
    static final MethodHandle zmq_send = h("zmq_send", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_LONG, JAVA_INT));
    static final MethodHandle zmq_recv = h("zmq_recv", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_LONG, JAVA_INT));
    /** The same, non-blocking only (ZMQ_DONTWAIT), reading/writing a Java heap array in place. */
    static final MethodHandle zmq_send_heap = h("zmq_send", FunctionDescriptor.of(JAVA_INT, PTR, ADDRESS, JAVA_LONG, JAVA_INT), CRIT_HEAP);
    static final MethodHandle zmq_recv_heap = h("zmq_recv", FunctionDescriptor.of(JAVA_INT, PTR, ADDRESS, JAVA_LONG, JAVA_INT), CRIT_HEAP);
    /** Non-blocking from/into native memory (no thread-state transition). */
    static final MethodHandle zmq_send_nb = h("zmq_send", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_LONG, JAVA_INT), CRIT);
    static final MethodHandle zmq_recv_nb = h("zmq_recv", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_LONG, JAVA_INT), CRIT);

    static final MethodHandle zmq_msg_init = h("zmq_msg_init", FunctionDescriptor.of(JAVA_INT, PTR), CRIT);
    static final MethodHandle zmq_msg_init_size = h("zmq_msg_init_size", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_LONG), CRIT);
    static final MethodHandle zmq_msg_close = h("zmq_msg_close", FunctionDescriptor.of(JAVA_INT, PTR), CRIT);
    static final MethodHandle zmq_msg_copy = h("zmq_msg_copy", FunctionDescriptor.of(JAVA_INT, PTR, PTR), CRIT);
    static final MethodHandle zmq_msg_data = h("zmq_msg_data", FunctionDescriptor.of(PTR, PTR), CRIT);
    static final MethodHandle zmq_msg_size = h("zmq_msg_size", FunctionDescriptor.of(JAVA_LONG, PTR), CRIT);
    static final MethodHandle zmq_msg_more = h("zmq_msg_more", FunctionDescriptor.of(JAVA_INT, PTR), CRIT);
    static final MethodHandle zmq_msg_gets = h("zmq_msg_gets", FunctionDescriptor.of(PTR, PTR, PTR));
    static final MethodHandle zmq_msg_send = h("zmq_msg_send", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_INT));
    static final MethodHandle zmq_msg_recv = h("zmq_msg_recv", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_INT));
    static final MethodHandle zmq_msg_send_nb = h("zmq_msg_send", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_INT), CRIT);
    static final MethodHandle zmq_msg_recv_nb = h("zmq_msg_recv", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_INT), CRIT);

    static final MethodHandle zmq_poll = h("zmq_poll", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT, JAVA_LONG));

    // Draft API (libzmq's ZMQ_BUILD_DRAFT_API): groups, routing ids, PEER's connect.
    static final MethodHandle zmq_join = h("zmq_join", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_leave = h("zmq_leave", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_connect_peer = h("zmq_connect_peer", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_msg_set_routing_id = h("zmq_msg_set_routing_id", FunctionDescriptor.of(JAVA_INT, PTR, JAVA_INT), CRIT);
    static final MethodHandle zmq_msg_routing_id = h("zmq_msg_routing_id", FunctionDescriptor.of(JAVA_INT, PTR), CRIT);
    static final MethodHandle zmq_msg_set_group = h("zmq_msg_set_group", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_msg_group = h("zmq_msg_group", FunctionDescriptor.of(PTR, PTR));
    static final MethodHandle zmq_proxy = h("zmq_proxy", FunctionDescriptor.of(JAVA_INT, PTR, PTR, PTR));
    static final MethodHandle zmq_proxy_steerable = h("zmq_proxy_steerable", FunctionDescriptor.of(JAVA_INT, PTR, PTR, PTR, PTR));
    static final MethodHandle zmq_socket_monitor = h("zmq_socket_monitor", FunctionDescriptor.of(JAVA_INT, PTR, PTR, JAVA_INT));

    static final MethodHandle zmq_curve_keypair = h("zmq_curve_keypair", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_curve_public = h("zmq_curve_public", FunctionDescriptor.of(JAVA_INT, PTR, PTR));
    static final MethodHandle zmq_z85_encode = h("zmq_z85_encode", FunctionDescriptor.of(PTR, PTR, PTR, JAVA_LONG));
    static final MethodHandle zmq_z85_decode = h("zmq_z85_decode", FunctionDescriptor.of(PTR, PTR, PTR));

    /** zmq_pollitem_t: {void *socket; int fd; short events; short revents;} on LP64. */
    static final long POLLITEM_SIZE = 16, POLLITEM_SOCKET = 0, POLLITEM_FD = 8, POLLITEM_EVENTS = 12, POLLITEM_REVENTS = 14;
    static final ValueLayout.OfShort SHORT = JAVA_SHORT;
    /** sizeof(zmq_msg_t) in libzmq 4.x and oxmq. */
    static final long MSG_T_SIZE = 64;

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) return r;
        if (t instanceof Error e) throw e;
        return new IllegalStateException("oxmq: unexpected exception from a native call", t);
    }
}
