package io.oxmq;

import io.oxmq.internal.Guard;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A ZeroMQ socket. Create one with {@link Context#socket(SocketType)}; close it with
 * {@link #close()} (try-with-resources).
 *
 * <h2>Sending and receiving without copies</h2>
 * <ul>
 * <li>{@code send(byte[])} hands the array to the library in place: a non-blocking attempt runs
 *     as a critical downcall that reads the Java heap directly; only when that cannot proceed
 *     (high-water mark) does the call wait for the socket to become writable and try again.</li>
 * <li>{@code send(MemorySegment)}, {@code send(ByteBuffer)} (direct or heap) and
 *     {@link #send(Frame, int)} (the library's own message, handed over without any copy).</li>
 * <li>{@code recv(byte[])}, {@code recv(ByteBuffer)}, {@code recv(MemorySegment)} write the
 *     message into the caller's memory and allocate nothing per message (for arrays and
 *     buffers passed again and again, at offset 0); {@link #recv(Frame, int)} lets a reusable
 *     {@link Frame} view the library's buffer without copying it.</li>
 * </ul>
 *
 * <h2>Blocking, interruption, timeouts</h2>
 * A blocking call waits in slices of at most {@value #SLICE_MS} ms inside the library and
 * checks between slices whether its thread was interrupted ({@link ZmqInterruptedException})
 * and whether {@link SocketOption#RCVTIMEO}/{@link SocketOption#SNDTIMEO} expired
 * ({@link AgainException}); closing the context ends it at once with {@link TermException}
 * (and closes the socket). With {@link Zmq#DONTWAIT}, "nothing now" is an ordinary result:
 * sends return {@code false}, receives return -1 or {@code null}.
 *
 * <h2>Threads</h2>
 * A socket of a non-thread-safe type may move between threads (hand it over through anything
 * that gives a happens-before edge), but two threads may not be inside it at once: the second
 * one gets an {@link IllegalStateException} instead of corrupting the socket. The draft
 * thread-safe types ({@link SocketType#isThreadSafe()}) have no such check. Calls on a closed
 * socket throw {@link IllegalStateException}.
 */
public final class Socket implements AutoCloseable {
    /** The longest a blocking call stays inside the library before it checks for interruption. */
    public static final int SLICE_MS = 100;

    private final Context context;
    final long handle;
    private final MemorySegment handleSeg;
    private final SocketType type;
    /** Null for the thread-safe types. */
    private final Guard guard;
    private final Arena arena = Arena.ofAuto();
    private final MemorySegment pollItem;
    /** The socket's own {@code zmq_msg_t} and option buffer; for the thread-safe types, where
     *  several threads may be inside at once, each thread's ({@link #perThread}). */
    private final MemorySegment recvMsg;
    private final MemorySegment scratch;
    private final ThreadLocal<MemorySegment[]> perThread;
    private volatile boolean closed;
    private volatile int rcvTimeout = -1;
    private volatile int sndTimeout = -1;
    // One-entry caches: the segment over the last array/buffer seen, so a caller who passes the
    // same one again allocates nothing.
    private byte[] lastSendArr, lastRecvArr;
    private MemorySegment lastSendArrSeg, lastRecvArrSeg;
    private ByteBuffer lastSendBuf, lastRecvBuf;
    private MemorySegment lastSendBufSeg, lastRecvBufSeg;

    Socket(Context context, SocketType type, long handle) {
        this.context = context;
        this.type = type;
        this.handle = handle;
        this.handleSeg = MemorySegment.ofAddress(handle);
        this.guard = type.isThreadSafe() ? null : new Guard();
        this.pollItem = arena.allocate(Native.POLLITEM_SIZE, 8);
        this.pollItem.set(JAVA_LONG, Native.POLLITEM_SOCKET, handle);
        this.recvMsg = newMsg(arena);
        this.scratch = arena.allocate(512, 8);
        this.perThread = type.isThreadSafe()
                ? ThreadLocal.withInitial(() -> {
                    Arena a = Arena.ofAuto();
                    return new MemorySegment[] {newMsg(a), a.allocate(512, 8)};
                })
                : null;
        setNativeInt(27, SLICE_MS);
        setNativeInt(28, SLICE_MS);
    }

    private static MemorySegment newMsg(Arena a) {
        MemorySegment m = a.allocate(Native.MSG_T_SIZE, 8);
        try {
            int rc = (int) Native.zmq_msg_init.invokeExact(m.address());
            if (rc != 0) throw new IllegalStateException("zmq_msg_init failed");
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        return m;
    }

    /** The {@code zmq_msg_t} a receive into the socket's own message uses (the calling
     *  thread's, for a thread-safe type). */
    private MemorySegment ownMsg() {
        return perThread == null ? recvMsg : perThread.get()[0];
    }

    /** The buffer options are set and read through (the calling thread's, for a thread-safe
     *  type). */
    private MemorySegment scratch() {
        return perThread == null ? scratch : perThread.get()[1];
    }

    /** After a receive into {@link #ownMsg()} was copied out: a thread-safe type's per-thread
     *  message lets its body go at once (a thread may never come back to release it). */
    private void doneWithOwnMsg() throws Throwable {
        if (perThread == null) return;
        long m = perThread.get()[0].address();
        int unused = (int) Native.zmq_msg_close.invokeExact(m);
        unused = (int) Native.zmq_msg_init.invokeExact(m);
    }

    /** The socket's type. */
    public SocketType type() {
        return type;
    }

    /** The context the socket belongs to. */
    public Context context() {
        return context;
    }

    /** Whether {@link #close()} was called (or the context closed the socket). */
    public boolean isClosed() {
        return closed;
    }

    // ---- guard -----------------------------------------------------------------------------

    private void enter() {
        if (guard != null && !guard.tryEnter()) {
            throw guard.busy("socket " + type, "a " + type + " socket is not thread-safe");
        }
        if (closed) {
            exit();
            throw new IllegalStateException("socket " + type + " is closed");
        }
    }

    private void exit() {
        if (guard != null) guard.exit();
    }

    /** Whether a thread is inside the socket now (a diagnostic; stale as soon as read). */
    boolean busy() {
        return guard != null && guard.occupied();
    }

    /** Runs {@code r} inside the socket (used by Poller/Proxy to hold sockets they use). */
    void enterForeign() {
        enter();
    }

    void exitForeign() {
        exit();
    }

    private ZmqException fail(String op, int errno) {
        if (errno == ZmqException.ETERM) closeNative();
        return ZmqException.of(op, errno);
    }

    // ---- lifecycle -------------------------------------------------------------------------

    /**
     * Closes the socket; pending outgoing messages are kept for up to
     * {@link SocketOption#LINGER} ms by the library. Idempotent. Throws
     * {@link IllegalStateException} when another thread is inside the socket.
     */
    @Override
    public void close() {
        if (closed) return;
        if (guard != null && !guard.tryEnter()) {
            throw new IllegalStateException("socket " + type + " is in use by another thread; close it there");
        }
        try {
            closeNative();
        } finally {
            exit();
        }
    }

    /** Closes the native socket; the caller is inside the socket. */
    private void closeNative() {
        if (closed) return;
        closed = true;
        try {
            int unused = (int) Native.zmq_msg_close.invokeExact(recvMsg.address());
            int rc = (int) Native.zmq_close.invokeExact(handle);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            context.forget(this);
        }
    }

    /** Tries to close the socket for the context; false when another thread is inside it. */
    boolean tryCloseForContext() {
        if (closed) return true;
        if (guard != null && !guard.tryEnter()) return false;
        try {
            closeNative();
        } finally {
            exit();
        }
        return true;
    }

    // ---- endpoints -------------------------------------------------------------------------

    /** Binds to {@code endpoint} ({@code tcp://127.0.0.1:*} picks a free port) and returns the
     *  endpoint actually bound ({@link SocketOption#LAST_ENDPOINT}). */
    public String bind(String endpoint) {
        endpointCall(Native.zmq_bind, "zmq_bind", endpoint);
        return get(SocketOption.LAST_ENDPOINT);
    }

    /** Connects to {@code endpoint}; the connection is made in the background. */
    public void connect(String endpoint) {
        endpointCall(Native.zmq_connect, "zmq_connect", endpoint);
    }

    /** Stops listening on {@code endpoint}. */
    public void unbind(String endpoint) {
        endpointCall(Native.zmq_unbind, "zmq_unbind", endpoint);
    }

    /** Disconnects from {@code endpoint}. */
    public void disconnect(String endpoint) {
        endpointCall(Native.zmq_disconnect, "zmq_disconnect", endpoint);
    }

    /**
     * PEER (draft): connects to {@code endpoint} and returns the routing id of that peer, to
     * send to it through a {@link Frame#setRoutingId(int) Frame's routing id} at once
     * ({@code zmq_connect_peer}).
     */
    public int connectPeer(String endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        enter();
        try (Arena a = Arena.ofConfined()) {
            int id = (int) Native.zmq_connect_peer.invokeExact(handle, a.allocateFrom(endpoint).address());
            if (id == 0) throw fail("zmq_connect_peer " + endpoint, Native.lastErrno());
            return id;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** DISH (draft): joins {@code group} (at most 255 bytes of UTF-8). Joining twice is
     *  EINVAL; other types say ENOTSUP ({@code zmq_join}). */
    public void join(String group) {
        endpointCall(Native.zmq_join, "zmq_join", group);
    }

    /** DISH (draft): leaves {@code group}; EINVAL if not joined ({@code zmq_leave}). */
    public void leave(String group) {
        endpointCall(Native.zmq_leave, "zmq_leave", group);
    }

    private void endpointCall(java.lang.invoke.MethodHandle mh, String op, String endpoint) {
        Objects.requireNonNull(endpoint, "endpoint");
        enter();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocateFrom(endpoint);
            int rc = (int) mh.invokeExact(handle, s.address());
            if (rc != 0) throw fail(op + " " + endpoint, Native.lastErrno());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    // ---- options ---------------------------------------------------------------------------

    private void setNativeInt(int id, int value) {
        try {
            scratch().set(JAVA_INT, 0, value);
            int rc = (int) Native.zmq_setsockopt.invokeExact(handle, id, scratch().address(), 4L);
            if (rc != 0) throw fail("zmq_setsockopt " + id, Native.lastErrno());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Sets {@code option} to {@code value}. */
    public <T> void set(SocketOption<T> option, T value) {
        Objects.requireNonNull(value, "value");
        if (!option.writable) throw new IllegalArgumentException(option + " is read-only");
        enter();
        try {
            if (option == SocketOption.RCVTIMEO || option == SocketOption.SNDTIMEO) {
                int v = (Integer) value;
                if (option == SocketOption.RCVTIMEO) rcvTimeout = v; else sndTimeout = v;
                setNativeInt(option.id, v >= 0 && v < SLICE_MS ? v : SLICE_MS);
                return;
            }
            byte[] bytes;
            switch (option.kind) {
                case INT -> { scratch().set(JAVA_INT, 0, (Integer) value); setRaw(option, 4); return; }
                case BOOL -> { scratch().set(JAVA_INT, 0, ((Boolean) value) ? 1 : 0); setRaw(option, 4); return; }
                case LONG -> { scratch().set(JAVA_LONG, 0, (Long) value); setRaw(option, 8); return; }
                case BYTES -> bytes = (byte[]) value;
                case STRING -> bytes = ((String) value).getBytes(StandardCharsets.UTF_8);
                case KEY -> {
                    String k = (String) value;
                    if (k.length() != 40) throw new IllegalArgumentException(option + " needs a 40-character Z85 key");
                    bytes = k.getBytes(StandardCharsets.US_ASCII);
                }
                default -> throw new AssertionError(option.kind);
            }
            if (bytes.length > scratch().byteSize()) {
                // Long values (the WSS_*_PEM certificates and keys) go through memory of their own.
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment m = a.allocate(bytes.length);
                    MemorySegment.copy(bytes, 0, m, JAVA_BYTE, 0, bytes.length);
                    setRaw(option, m, bytes.length);
                }
                return;
            }
            MemorySegment.copy(bytes, 0, scratch(), JAVA_BYTE, 0, bytes.length);
            setRaw(option, bytes.length);
        } finally {
            exit();
        }
    }

    private void setRaw(SocketOption<?> option, long len) {
        setRaw(option, scratch(), len);
    }

    private void setRaw(SocketOption<?> option, MemorySegment value, long len) {
        try {
            int rc = (int) Native.zmq_setsockopt.invokeExact(handle, option.id, value.address(), len);
            if (rc != 0) throw fail("zmq_setsockopt " + option, Native.lastErrno());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The current value of {@code option}. */
    @SuppressWarnings("unchecked")
    public <T> T get(SocketOption<T> option) {
        if (!option.readable) throw new IllegalArgumentException(option + " is write-only");
        if (option == SocketOption.RCVTIMEO) return (T) Integer.valueOf(rcvTimeout);
        if (option == SocketOption.SNDTIMEO) return (T) Integer.valueOf(sndTimeout);
        enter();
        try {
            MemorySegment len = scratch().asSlice(504, 8);
            long cap = 500;
            if (option.kind == SocketOption.Kind.KEY) cap = 41;
            len.set(JAVA_LONG, 0, cap);
            int rc = (int) Native.zmq_getsockopt.invokeExact(handle, option.id, scratch().address(), len.address());
            if (rc != 0) throw fail("zmq_getsockopt " + option, Native.lastErrno());
            long n = len.get(JAVA_LONG, 0);
            return (T) switch (option.kind) {
                case INT -> Integer.valueOf(scratch().get(JAVA_INT, 0));
                case BOOL -> Boolean.valueOf(scratch().get(JAVA_INT, 0) != 0);
                case LONG -> Long.valueOf(n == 4 ? scratch().get(JAVA_INT, 0) : scratch().get(JAVA_LONG, 0));
                case BYTES -> scratch().asSlice(0, n).toArray(JAVA_BYTE);
                case STRING, KEY -> {
                    long l = n;
                    while (l > 0 && scratch().get(JAVA_BYTE, l - 1) == 0) l--;
                    yield new String(scratch().asSlice(0, l).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
                }
            };
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** Subscribes a SUB socket to messages starting with {@code prefix} (empty: all). */
    public void subscribe(byte[] prefix) {
        set(SocketOption.SUBSCRIBE, prefix);
    }

    /** Subscribes to messages starting with the UTF-8 bytes of {@code prefix}. */
    public void subscribe(String prefix) {
        subscribe(prefix.getBytes(StandardCharsets.UTF_8));
    }

    /** Removes a subscription. */
    public void unsubscribe(byte[] prefix) {
        set(SocketOption.UNSUBSCRIBE, prefix);
    }

    /** Whether the frame just received is followed by more frames of the same message. */
    public boolean hasReceiveMore() {
        return get(SocketOption.RCVMORE);
    }

    /** The endpoint of the last bind. */
    public String lastEndpoint() {
        return get(SocketOption.LAST_ENDPOINT);
    }

    // ---- send ------------------------------------------------------------------------------

    private MemorySegment sendArrSeg(byte[] a) {
        if (perThread != null) return MemorySegment.ofArray(a); // no cache shared by threads
        if (a != lastSendArr) {
            lastSendArr = a;
            lastSendArrSeg = MemorySegment.ofArray(a);
        }
        return lastSendArrSeg;
    }

    private MemorySegment recvArrSeg(byte[] a) {
        if (perThread != null) return MemorySegment.ofArray(a);
        if (a != lastRecvArr) {
            lastRecvArr = a;
            lastRecvArrSeg = MemorySegment.ofArray(a);
        }
        return lastRecvArrSeg;
    }

    /** Sends all of {@code data} as one frame; see {@link #send(byte[], int, int, int)}. */
    public boolean send(byte[] data, int flags) {
        return send(data, 0, data.length, flags);
    }

    /** Sends {@code data} as one frame, blocking. */
    public void send(byte[] data) {
        send(data, 0, data.length, 0);
    }

    /** Sends the UTF-8 bytes of {@code s} as one frame. */
    public boolean send(String s, int flags) {
        return send(s.getBytes(StandardCharsets.UTF_8), flags);
    }

    /**
     * Sends {@code len} bytes of {@code data} from {@code off} as one frame (more follow when
     * {@code flags} has {@link Zmq#SNDMORE}). The array is read in place, never copied by the
     * binding. Returns {@code false} only with {@link Zmq#DONTWAIT} when the frame cannot be
     * queued now.
     */
    public boolean send(byte[] data, int off, int len, int flags) {
        Objects.checkFromIndexSize(off, len, data.length);
        enter();
        try {
            MemorySegment seg = sendArrSeg(data);
            if (off != 0) seg = seg.asSlice(off, len);
            for (;;) {
                int rc = (int) Native.zmq_send_heap.invokeExact(handle, seg, (long) len, flags | Zmq.DONTWAIT);
                if (rc >= 0) return true;
                int e = Native.lastErrno();
                if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_send", e);
                if ((flags & Zmq.DONTWAIT) != 0) return false;
                awaitWritable("zmq_send");
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    private long deadline(int timeoutMs) {
        return timeoutMs < 0 ? 0 : System.nanoTime() + timeoutMs * 1_000_000L;
    }

    private void checkWait(String op, int timeoutMs, long deadline) {
        if (Thread.currentThread().isInterrupted()) throw new ZmqInterruptedException(op);
        if (timeoutMs >= 0 && System.nanoTime() - deadline >= 0) throw new AgainException(op);
    }

    /** Waits until the socket can send, in slices; honours SNDTIMEO and interruption. */
    private void awaitWritable(String op) throws Throwable {
        int to = sndTimeout;
        long dl = deadline(to);
        for (;;) {
            checkWait(op, to, dl);
            pollItem.set(Native.SHORT, Native.POLLITEM_EVENTS, (short) Zmq.POLLOUT);
            pollItem.set(Native.SHORT, Native.POLLITEM_REVENTS, (short) 0);
            long slice = to < 0 ? SLICE_MS : Math.max(0, Math.min(SLICE_MS, (dl - System.nanoTime()) / 1_000_000L));
            int rc = (int) Native.zmq_poll.invokeExact(pollItem.address(), 1, slice);
            if (rc > 0) return;
            if (rc < 0) {
                int e = Native.lastErrno();
                if (e != ZmqException.EINTR) throw fail(op, e);
            }
        }
    }

    /**
     * Sends the bytes of {@code data} (native or heap) as one frame, of any size (over 2 GiB
     * too, as libzmq). Native memory is passed to the library as it is; a heap segment is read
     * in place like an array.
     * Returns {@code false} only with {@link Zmq#DONTWAIT} when the frame cannot be queued now.
     */
    public boolean send(MemorySegment data, int flags) {
        enter();
        try {
            return sendSeg(data, flags);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    private static void checkAlive(MemorySegment seg) {
        if (!seg.scope().isAlive()) throw new IllegalStateException("segment's arena is closed");
    }

    private boolean sendSeg(MemorySegment data, int flags) throws Throwable {
        checkAlive(data);
        long len = data.byteSize();
        if (!data.isNative()) {
            for (;;) {
                int rc = (int) Native.zmq_send_heap.invokeExact(handle, data, len, flags | Zmq.DONTWAIT);
                if (rc >= 0) return true;
                int e = Native.lastErrno();
                if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_send", e);
                if ((flags & Zmq.DONTWAIT) != 0) return false;
                awaitWritable("zmq_send");
            }
        }
        int rc = (int) Native.zmq_send_nb.invokeExact(handle, data.address(), len, flags | Zmq.DONTWAIT);
        if (rc >= 0) return true;
        int e = Native.lastErrno();
        if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_send", e);
        if ((flags & Zmq.DONTWAIT) != 0) return false;
        int to = sndTimeout;
        long dl = deadline(to);
        for (;;) {
            checkWait("zmq_send", to, dl);
            // Keep the segment's memory alive across the blocking call.
            rc = sendNativeBlocking(data, len, flags);
            if (rc >= 0) return true;
            e = Native.lastErrno();
            if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_send", e);
        }
    }

    private int sendNativeBlocking(MemorySegment data, long len, int flags) throws Throwable {
        // The scope check: a segment from a closed arena throws here instead of passing freed
        // memory to the library.
        if (!data.scope().isAlive()) throw new IllegalStateException("segment's arena is closed");
        return (int) Native.zmq_send.invokeExact(handle, data.address(), len, flags & ~Zmq.DONTWAIT);
    }

    /**
     * Sends the remaining bytes of {@code buf} (position to limit) as one frame, without
     * copying them in the binding, and advances its position. Returns {@code false} only with
     * {@link Zmq#DONTWAIT} when the frame cannot be queued now (the position is then unchanged).
     */
    public boolean send(ByteBuffer buf, int flags) {
        int pos = buf.position(), n = buf.remaining();
        boolean ok;
        if (buf.hasArray()) {
            ok = send(buf.array(), buf.arrayOffset() + pos, n, flags);
        } else {
            MemorySegment seg;
            if (buf == lastSendBuf && perThread == null) {
                seg = lastSendBufSeg;
            } else {
                seg = MemorySegment.ofBuffer(buf.duplicate().clear());
                lastSendBuf = buf;
                lastSendBufSeg = seg;
            }
            ok = send(pos == 0 && n == seg.byteSize() ? seg : seg.asSlice(pos, n), flags);
        }
        if (ok) buf.position(pos + n);
        return ok;
    }

    /**
     * Sends a {@link Frame} (the library's own message) without copying its bytes; the frame is
     * empty afterwards and may be reused. Returns {@code false} only with {@link Zmq#DONTWAIT}
     * when it cannot be queued now (the frame keeps its content).
     */
    public boolean send(Frame frame, int flags) {
        enter();
        try {
            frame.enter();
            try {
                return sendInside(frame, flags);
            } finally {
                frame.exit();
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** The caller is inside the socket and the frame. */
    private boolean sendInside(Frame frame, int flags) throws Throwable {
        long msg = frame.msgAddress();
        int rc = (int) Native.zmq_msg_send_nb.invokeExact(msg, handle, flags | Zmq.DONTWAIT);
        if (rc >= 0) { frame.sent(); return true; }
        int e = Native.lastErrno();
        if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_msg_send", e);
        if ((flags & Zmq.DONTWAIT) != 0) return false;
        int to = sndTimeout;
        long dl = deadline(to);
        for (;;) {
            checkWait("zmq_msg_send", to, dl);
            rc = (int) Native.zmq_msg_send.invokeExact(msg, handle, flags & ~Zmq.DONTWAIT);
            if (rc >= 0) { frame.sent(); return true; }
            e = Native.lastErrno();
            if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_msg_send", e);
        }
    }

    // ---- receive ---------------------------------------------------------------------------

    /**
     * Waits for a frame into this socket's own {@code zmq_msg_t} (blocking, in slices). Returns
     * the frame's size, or -1 when {@code flags} has DONTWAIT and nothing is there. The caller
     * is inside the socket.
     */
    private int recvIntoOwnMsg(int flags, String op) throws Throwable {
        long msg = ownMsg().address();
        int rc = (int) Native.zmq_msg_recv_nb.invokeExact(msg, handle, flags | Zmq.DONTWAIT);
        if (rc >= 0) return rc;
        int e = Native.lastErrno();
        if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail(op, e);
        if ((flags & Zmq.DONTWAIT) != 0) return -1;
        int to = rcvTimeout;
        long dl = deadline(to);
        for (;;) {
            checkWait(op, to, dl);
            rc = (int) Native.zmq_msg_recv.invokeExact(msg, handle, flags & ~Zmq.DONTWAIT);
            if (rc >= 0) return rc;
            e = Native.lastErrno();
            if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail(op, e);
        }
    }

    /** Copies the own message's bytes to {@code dst} (up to {@code cap}); returns the size. */
    private int copyOwnMsg(MemorySegment dst, long cap) throws Throwable {
        long msg = ownMsg().address();
        long size = (long) Native.zmq_msg_size.invokeExact(msg);
        long data = (long) Native.zmq_msg_data.invokeExact(msg);
        long n = Math.min(size, cap);
        if (n > 0) MemorySegment.copy(Native.ALL, data, dst, 0, n);
        return (int) Math.min(size, Integer.MAX_VALUE); // as zmq_recv: INT_MAX past 2 GiB
    }

    /** Receives a frame into all of {@code buf}; see {@link #recv(byte[], int, int, int)}. */
    public int recv(byte[] buf, int flags) {
        return recv(buf, 0, buf.length, flags);
    }

    /**
     * Receives one frame into {@code buf[off, off+len)}. Returns the frame's full size (larger
     * than {@code len} when it was truncated, as {@code zmq_recv} does), or -1 with
     * {@link Zmq#DONTWAIT} when no frame is waiting. Allocates nothing when {@code buf} is the
     * array of the previous call and {@code off} is 0.
     */
    public int recv(byte[] buf, int off, int len, int flags) {
        Objects.checkFromIndexSize(off, len, buf.length);
        enter();
        try {
            MemorySegment seg = recvArrSeg(buf);
            if (off != 0) seg = seg.asSlice(off, len);
            int rc = (int) Native.zmq_recv_heap.invokeExact(handle, seg, (long) len, flags | Zmq.DONTWAIT);
            if (rc >= 0) return rc;
            int e = Native.lastErrno();
            if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_recv", e);
            if ((flags & Zmq.DONTWAIT) != 0) return -1;
            // Wait in native memory; the frame is then copied once from the library's buffer.
            if (recvIntoOwnMsg(flags, "zmq_recv") < 0) return -1;
            return copyOwnMsg(seg, len);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /**
     * Receives one frame into {@code dst} (native or heap). Returns the frame's full size
     * (larger than {@code dst} when truncated), or -1 with {@link Zmq#DONTWAIT} when none is
     * waiting. Allocates nothing.
     */
    public int recv(MemorySegment dst, int flags) {
        if (dst.isReadOnly()) throw new IllegalArgumentException("read-only segment");
        enter();
        try {
            return recvSeg(dst, flags);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    private int recvSeg(MemorySegment dst, int flags) throws Throwable {
        checkAlive(dst);
        long cap = dst.byteSize();
        int rc;
        if (dst.isNative()) {
            rc = (int) Native.zmq_recv_nb.invokeExact(handle, dst.address(), cap, flags | Zmq.DONTWAIT);
        } else {
            rc = (int) Native.zmq_recv_heap.invokeExact(handle, dst, cap, flags | Zmq.DONTWAIT);
        }
        if (rc >= 0) return rc;
        int e = Native.lastErrno();
        if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_recv", e);
        if ((flags & Zmq.DONTWAIT) != 0) return -1;
        if (dst.isNative()) {
            int to = rcvTimeout;
            long dl = deadline(to);
            for (;;) {
                checkWait("zmq_recv", to, dl);
                if (!dst.scope().isAlive()) throw new IllegalStateException("segment's arena is closed");
                rc = (int) Native.zmq_recv.invokeExact(handle, dst.address(), cap, flags & ~Zmq.DONTWAIT);
                if (rc >= 0) return rc;
                e = Native.lastErrno();
                if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_recv", e);
            }
        }
        if (recvIntoOwnMsg(flags, "zmq_recv") < 0) return -1;
        int n = copyOwnMsg(dst, cap);
        doneWithOwnMsg();
        return n;
    }

    /**
     * Receives one frame into {@code buf} from its position (up to its limit) and advances the
     * position by the bytes written. Returns the frame's full size, or -1 with
     * {@link Zmq#DONTWAIT}. Allocates nothing for a buffer passed again at position 0.
     */
    public int recv(ByteBuffer buf, int flags) {
        if (buf.isReadOnly()) throw new IllegalArgumentException("read-only buffer");
        int pos = buf.position(), n = buf.remaining();
        int rc;
        if (buf.hasArray()) {
            rc = recv(buf.array(), buf.arrayOffset() + pos, n, flags);
        } else {
            MemorySegment seg;
            if (buf == lastRecvBuf && perThread == null) {
                seg = lastRecvBufSeg;
            } else {
                seg = MemorySegment.ofBuffer(buf.duplicate().clear());
                lastRecvBuf = buf;
                lastRecvBufSeg = seg;
            }
            rc = recv(pos == 0 && n == seg.byteSize() ? seg : seg.asSlice(pos, n), flags);
        }
        if (rc > 0) buf.position(pos + Math.min(rc, n));
        return rc;
    }

    /**
     * Receives one frame into {@code frame}, which then views the library's buffer without any
     * copy until the next receive into it or its {@link Frame#close()}. Returns {@code false}
     * only with {@link Zmq#DONTWAIT} when no frame is waiting. Allocates nothing.
     */
    public boolean recv(Frame frame, int flags) {
        enter();
        try {
            frame.enter();
            try {
                return recvInside(frame, flags);
            } finally {
                frame.exit();
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** The caller is inside the socket and the frame. */
    private boolean recvInside(Frame frame, int flags) throws Throwable {
        frame.beforeReceive();
        long msg = frame.msgAddress();
        int rc = (int) Native.zmq_msg_recv_nb.invokeExact(msg, handle, flags | Zmq.DONTWAIT);
        if (rc >= 0) { frame.received(rc); return true; }
        int e = Native.lastErrno();
        if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_msg_recv", e);
        if ((flags & Zmq.DONTWAIT) != 0) return false;
        int to = rcvTimeout;
        long dl = deadline(to);
        for (;;) {
            checkWait("zmq_msg_recv", to, dl);
            rc = (int) Native.zmq_msg_recv.invokeExact(msg, handle, flags & ~Zmq.DONTWAIT);
            if (rc >= 0) { frame.received(rc); return true; }
            e = Native.lastErrno();
            if (e != ZmqException.EAGAIN && e != ZmqException.EINTR) throw fail("zmq_msg_recv", e);
        }
    }

    /**
     * Receives one frame as a new array (blocking unless DONTWAIT). Returns {@code null} with
     * {@link Zmq#DONTWAIT} when none is waiting. Allocates the array; the buffer methods do not.
     */
    public byte[] recv(int flags) {
        enter();
        try {
            int n = recvIntoOwnMsg(flags, "zmq_msg_recv");
            if (n < 0) return null;
            if (n == Integer.MAX_VALUE) {
                // zmq_msg_recv says INT_MAX for any frame from 2 GiB - 1 on: look at its size.
                long size = (long) Native.zmq_msg_size.invokeExact(ownMsg().address());
                if (size > MAX_ARRAY) throw tooLargeForArray("zmq_msg_recv", size);
            }
            byte[] out = new byte[n];
            long data = (long) Native.zmq_msg_data.invokeExact(ownMsg().address());
            if (n > 0) MemorySegment.copy(Native.ALL, JAVA_BYTE, data, out, 0, n);
            doneWithOwnMsg();
            return out;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** The longest array a JVM allocates. */
    static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    /** A received frame of {@code size} bytes cannot be returned as an array: it is dropped and
     *  the caller told to receive such frames into a {@link Frame}. */
    static ZmqException tooLargeForArray(String op, long size) {
        return new ZmqException(op + ": a frame of " + size + " bytes does not fit a Java array"
                + " (receive it into a Frame)", ZmqException.EMSGSIZE);
    }

    /** Receives one frame, blocking. */
    public byte[] recv() {
        return recv(0);
    }

    /** Receives one frame as a UTF-8 string ({@code null} with DONTWAIT and nothing waiting). */
    public String recvStr(int flags) {
        byte[] b = recv(flags);
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    // ---- monitor ---------------------------------------------------------------------------

    /** Starts publishing this socket's events ({@link MonitorEvent} bits) on a PAIR socket at
     *  {@code inproc} endpoint {@code endpoint}; {@code null} stops it. See {@link Monitor}. */
    public void monitor(String endpoint, int events) {
        enter();
        try (Arena a = Arena.ofConfined()) {
            long ep = endpoint == null ? 0 : a.allocateFrom(endpoint).address();
            int rc = (int) Native.zmq_socket_monitor.invokeExact(handle, ep, events);
            if (rc != 0) throw fail("zmq_socket_monitor", Native.lastErrno());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    @Override
    public String toString() {
        return "Socket[" + type + (closed ? ", closed" : "") + "]";
    }
}
