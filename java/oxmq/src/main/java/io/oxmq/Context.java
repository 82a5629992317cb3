package io.oxmq;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A ZeroMQ context: the owner of sockets and of the library's I/O threads. Thread-safe.
 *
 * <p>{@link #close()} ends every blocking call on its sockets with {@link TermException}, closes
 * every socket (a socket busy in another thread closes itself as its call ends), then
 * terminates the library context. It does not wait for sockets the application forgot to
 * close, unlike {@code zmq_ctx_term}; pending messages are kept for each socket's
 * {@link SocketOption#LINGER}.
 *
 * <p>The native library is loaded when the first context is made; see the module
 * documentation for choosing another {@code libzmq.so.5}.
 */
public final class Context implements AutoCloseable {
    /** ZMQ_IO_THREADS. */
    public static final int IO_THREADS = 1;
    /** ZMQ_MAX_SOCKETS. */
    public static final int MAX_SOCKETS = 2;
    /** ZMQ_IPV6: the default of new sockets' ZMQ_IPV6 (0 or 1). */
    public static final int IPV6 = 42;
    /** ZMQ_BLOCKY: whether closing waits for linger (1, the default) or not (0). */
    public static final int BLOCKY = 70;

    private final MemorySegment handle;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private boolean terminated;

    /** A context with the library's defaults (one I/O thread). */
    public Context() {
        try {
            long h = (long) Native.zmq_ctx_new.invokeExact();
            if (h == 0) throw ZmqException.of("zmq_ctx_new", Native.lastErrno());
            handle = MemorySegment.ofAddress(h);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A context with {@code ioThreads} I/O threads. */
    public Context(int ioThreads) {
        this();
        set(IO_THREADS, ioThreads);
    }

    /**
     * The native context pointer ({@code void *} of {@code zmq_ctx_new}), for code that passes
     * this context to further functions of the library found through {@link Zmq#symbols()}.
     * Valid until {@link #close()}; the context still owns it.
     */
    public long nativeAddress() {
        return handle.address();
    }

    private void checkOpen() {
        if (closed) throw new IllegalStateException("context is closed");
    }

    /** Sets a context option (ZMQ_IO_THREADS, ZMQ_MAX_SOCKETS, ...). */
    public void set(int option, int value) {
        checkOpen();
        try {
            int rc = (int) Native.zmq_ctx_set.invokeExact(handle.address(), option, value);
            if (rc != 0) throw ZmqException.of("zmq_ctx_set", Native.lastErrno());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Reads a context option. */
    public int get(int option) {
        checkOpen();
        try {
            int rc = (int) Native.zmq_ctx_get.invokeExact(handle.address(), option);
            if (rc < 0) throw ZmqException.of("zmq_ctx_get", Native.lastErrno());
            return rc;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Every socket's counters in the Prometheus text format, as the {@code /metrics} endpoint
     * that {@code OXMQ_METRICS_ADDR=HOST:PORT} in the environment makes the process serve: for
     * an application that serves metrics itself (oxmq's library only). Waits up to 100 ms for
     * the sockets to publish fresh counts; see {@link #metrics(int)}.
     */
    public String metrics() {
        return metrics(100);
    }

    /**
     * {@link #metrics()} waiting up to {@code timeoutMs} (0: not at all) for fresh counts: a
     * socket publishes them at its thread's next call into it, or at once while that thread
     * waits in a blocking call or a poll; one that has not is reported from its last
     * publication ({@code oxmq_socket_snapshot_age_seconds}). A thread that owns sockets
     * itself passes 0.
     *
     * @throws UnsupportedOperationException on a libzmq other than oxmq's
     */
    public String metrics(int timeoutMs) {
        checkOpen();
        if (Native.oxmq_ctx_metrics == null) {
            throw new UnsupportedOperationException("metrics need oxmq's libzmq.so.5, not " + Native.LIBRARY_DESCRIPTION);
        }
        if (timeoutMs < 0) throw new IllegalArgumentException("timeoutMs < 0");
        try (Arena arena = Arena.ofConfined()) {
            long size = 64 * 1024;
            while (true) {
                MemorySegment buf = arena.allocate(size);
                int n = (int) Native.oxmq_ctx_metrics.invokeExact(handle.address(), buf.address(), size, timeoutMs);
                if (n < 0) throw ZmqException.of("oxmq_ctx_metrics", Native.lastErrno());
                if (n < size) return buf.getString(0);
                size = n + 1L; // the text grew past the buffer: once more, at its size
                timeoutMs = 0;
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** A new socket of {@code type}. */
    public Socket socket(SocketType type) {
        checkOpen();
        long h;
        try {
            h = (long) Native.zmq_socket.invokeExact(handle.address(), type.value);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (h == 0) throw ZmqException.of("zmq_socket " + type, Native.lastErrno());
        Socket s = new Socket(this, type, h);
        sockets.add(s);
        if (closed) { // closed meanwhile: do not leave the socket behind
            s.tryCloseForContext();
            throw new IllegalStateException("context is closed");
        }
        return s;
    }

    void forget(Socket s) {
        sockets.remove(s);
    }

    /** The sockets of this context not closed yet. */
    public List<Socket> sockets() {
        return new ArrayList<>(sockets);
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    /** Makes every blocking call on this context's sockets, present and future, fail with
     *  {@link TermException}, without closing anything ({@code zmq_ctx_shutdown}). */
    public void shutdown() {
        if (terminated) return;
        try {
            int rc = (int) Native.zmq_ctx_shutdown.invokeExact(handle.address());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Shuts down, closes all sockets and terminates the context. Idempotent. */
    @Override
    public synchronized void close() {
        if (terminated) return;
        closed = true;
        shutdown();
        // Sockets idle in other threads are closed here; a socket inside a call in another
        // thread sees ETERM and closes itself as the call returns. Wait for those briefly.
        while (!sockets.isEmpty()) {
            boolean progress = false;
            for (Socket s : new ArrayList<>(sockets)) {
                if (s.tryCloseForContext()) progress = true;
            }
            if (!progress) Thread.onSpinWait();
            if (!sockets.isEmpty() && !progress) Thread.yield();
        }
        try {
            for (;;) {
                int rc = (int) Native.zmq_ctx_term.invokeExact(handle.address());
                if (rc == 0 || Native.lastErrno() != ZmqException.EINTR) break;
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        terminated = true;
    }
}
