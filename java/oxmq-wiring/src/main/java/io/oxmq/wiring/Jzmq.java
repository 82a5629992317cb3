package io.oxmq.wiring;

import io.oxmq.AgainException;
import io.oxmq.Frame;
import io.oxmq.Zmq;
import io.oxmq.ZmqException;
import io.oxmq.ZmqInterruptedException;
import io.oxmq.internal.Guard;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A wiring handle, with the seed's Java API: create named exchanges (where this program sends)
 * and queues (where it receives), bind an exchange to a queue by name, send to an exchange,
 * receive from this handle's queues.
 *
 * <pre>{@code
 * try (Jzmq obj = new Jzmq("")) {                 // "": the embedded name service
 *     int eid = obj.createExchange("E", Jzmq.SCOPE_GLOBAL, "");
 *     obj.createQueue("Q", Jzmq.SCOPE_GLOBAL, "");
 *     obj.bind("E", "Q");
 *     obj.send(eid, new byte[] {1, 2, 3});
 *     byte[] msg = obj.receive();
 * }
 * }</pre>
 *
 * <p>A handle is used by one thread at a time, like a ZeroMQ socket. Every failure is a
 * {@link ZmqException} carrying the errno of oxmq's C front end: {@code ENOENT} (unknown
 * exchange or queue), {@code EADDRINUSE} (the name is taken), {@code EHOSTUNREACH} (no name
 * service), {@code EINVAL} (bad location, scope or id). Hosts: {@code ""} runs (or joins) the
 * embedded name service on 127.0.0.1:5682 ({@code OXMQ_WIRING_PORT} overrides the port);
 * {@code "host"} or {@code "host:port"} names a server ({@code oxmq-name-server}). Locations
 * of global objects: {@code ""} picks an address, {@code "interface:port"} binds there.
 */
public final class Jzmq implements AutoCloseable {
    /** Seen by this handle only. */
    public static final int SCOPE_LOCAL = 0;
    /** Registered with the name service: reachable from other processes and machines. */
    public static final int SCOPE_GLOBAL = 1;
    /** Seen by every handle of this process (oxmq's addition). */
    public static final int SCOPE_PROCESS = 2;
    /** An exchange's default style: every bound queue gets every message. */
    public static final int STYLE_FANOUT = 0;
    /** An exchange style: each message goes to one bound queue. */
    public static final int STYLE_LOAD_BALANCE = 1;

    /** How long one native wait of {@link #receive()} lasts before it looks for an interrupt. */
    private static final int RECEIVE_SLICE_MS = 100;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(PathElement.groupElement("errno"));
    private static final Linker.Option ERRNO_OPT = Linker.Option.captureCallState("errno");

    private static final MethodHandle CREATE = bind("czmq_create", FunctionDescriptor.of(ADDRESS, ADDRESS));
    private static final MethodHandle DESTROY = bind("czmq_destroy_ex", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    private static final MethodHandle CREATE_EXCHANGE = bind("czmq_create_exchange_ex",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle CREATE_QUEUE = bind("czmq_create_queue",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle BIND = bind("czmq_bind_ex", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    private static final MethodHandle SEND_MSG = bind("czmq_send_msg", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    /** czmq_try_send_msg (it never waits), as a critical downcall. */
    private static final MethodHandle TRY_SEND_MSG = critical("czmq_try_send_msg", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
    private static final MethodHandle RECEIVE_MSG = bind("czmq_receive_msg", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    /** czmq_receive_msg with timeout 0 (it never waits), as a critical downcall; its errno is
     *  read with {@link #ERRNO_NOW} right after it. */
    private static final MethodHandle RECEIVE_MSG_NOW = critical("czmq_receive_msg", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle SEND_PARKED = bind("czmq_send_parked", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
    private static final MethodHandle RECEIVE = bind("czmq_receive_ex",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_INT));
    private static final MethodHandle RECEIVE_INTO = bind("czmq_receive_into",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT));
    private static final MethodHandle LOOKUP = bind("czmq_lookup", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    /** czmq_receive_into with timeout 0 (it never waits), as a critical downcall: it may write
     *  a Java array in place. Its errno is read with {@link #ERRNO_NOW} right after it. */
    private static final MethodHandle RECEIVE_NOW = critical("czmq_receive_into",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_INT));
    /** czmq_try_send (it never waits), as a critical downcall: it may read a Java array in place. */
    private static final MethodHandle TRY_SEND = critical("czmq_try_send",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG));
    private static final MethodHandle ERRNO_NOW = critical("zmq_errno", FunctionDescriptor.of(JAVA_INT));
    /** Calls a {@code czmq_free_fn} the library handed out with a received message. */
    private static final MethodHandle CALL_FREE = LINKER.downcallHandle(FunctionDescriptor.ofVoid(ADDRESS));

    private static MethodHandle bind(String name, FunctionDescriptor fd) {
        MemorySegment fn = Zmq.symbols().find(name).orElseThrow(() -> new UnsatisfiedLinkError(
                name + " is not in " + Zmq.library() + ": the wiring API needs oxmq's libzmq.so.5"));
        return LINKER.downcallHandle(fn, fd, ERRNO_OPT);
    }

    private static MethodHandle critical(String name, FunctionDescriptor fd) {
        MemorySegment fn = Zmq.symbols().find(name).orElseThrow(() -> new UnsatisfiedLinkError(
                name + " is not in " + Zmq.library() + ": the wiring API needs oxmq's libzmq.so.5"));
        return LINKER.downcallHandle(fn, fd, Linker.Option.critical(true));
    }

    private final Arena arena = Arena.ofShared();
    /** errno of the last call; data, size and free-function out-parameters of receive. */
    private final MemorySegment state = arena.allocate(CALL_STATE);
    private final MemorySegment out = arena.allocate(24, 8);
    /** Where send copies a message; grown to the largest sent. The library copies it again
     *  (no free function), so it is reused at once. */
    /** Where receive copies a message (one native call, one copy); grown to the largest
     *  received. */
    private MemorySegment recvBuf = arena.allocate(4096, 8);
    private volatile MemorySegment handle;
    /** Keeps a second thread out (see {@link #enter()}). */
    private final Guard guard = new Guard();

    /**
     * A handle talking to the name service at {@code hostname} ({@code ""}: the embedded one).
     *
     * @throws ZmqException {@code EHOSTUNREACH} when no name service answers, {@code EINVAL} for
     *         a malformed host
     */
    public Jzmq(String hostname) {
        MemorySegment h;
        try (Arena a = Arena.ofConfined()) {
            h = (MemorySegment) CREATE.invokeExact(state, a.allocateFrom(nonNull(hostname, "hostname")));
        } catch (Throwable t) {
            arena.close();
            throw rethrow(t);
        }
        if (h.equals(MemorySegment.NULL)) {
            int e = errno();
            arena.close();
            throw new ZmqException("czmq_create(\"" + hostname + "\")", e);
        }
        handle = h;
    }

    /** Creates an exchange that delivers each message to every queue bound to it; returns its id
     *  for {@link #send}. {@code location} matters for {@link #SCOPE_GLOBAL} only. */
    public int createExchange(String exchange, int scope, String location) {
        return createExchange(exchange, scope, location, STYLE_FANOUT);
    }

    /** Creates an exchange with a style ({@link #STYLE_FANOUT} or {@link #STYLE_LOAD_BALANCE}). */
    public int createExchange(String exchange, int scope, String location, int style) {
        enter();
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) CREATE_EXCHANGE.invokeExact(state, live(), a.allocateFrom(nonNull(exchange, "exchange")), scope,
                    a.allocateFrom(location == null ? "" : location), style);
            return check(rc, "createExchange(\"" + exchange + "\")");
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            exit();
        }
    }

    /** Creates a queue; returns its id. {@code location} matters for {@link #SCOPE_GLOBAL} only. */
    public int createQueue(String queue, int scope, String location) {
        enter();
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) CREATE_QUEUE.invokeExact(state, live(), a.allocateFrom(nonNull(queue, "queue")), scope,
                    a.allocateFrom(location == null ? "" : location));
            return check(rc, "createQueue(\"" + queue + "\")");
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            exit();
        }
    }

    /** Creates a queue at a location the library picks (the seed's two-argument form in Python). */
    public int createQueue(String queue, int scope) {
        return createQueue(queue, scope, "");
    }

    /** Wires {@code exchange} to {@code queue}, wherever each lives (resolving global names
     *  through the name service). Binding the same pair again does nothing. */
    public void bind(String exchange, String queue) {
        enter();
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) BIND.invokeExact(state, live(), a.allocateFrom(nonNull(exchange, "exchange")),
                    a.allocateFrom(nonNull(queue, "queue")));
            check(rc, "bind(\"" + exchange + "\", \"" + queue + "\")");
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            exit();
        }
    }

    /** Sends {@code message} through the exchange {@code eid}; the array may be reused at once. */
    public void send(int eid, byte[] message) {
        send(eid, nonNull(message, "message"), 0, message.length);
    }

    /** Sends {@code length} bytes of {@code message} from {@code offset} through exchange {@code eid}. */
    public void send(int eid, byte[] message, int offset, int length) {
        enter();
        try {
            java.util.Objects.checkFromIndexSize(offset, length, nonNull(message, "message").length);
            MemorySegment h = live();
            if (!trySend(h, eid, MemorySegment.ofArray(message).asSlice(offset, length))) {
                sendParked(h, eid);
            }
        } finally {
            exit();
        }
    }

    /** Sends the bytes of a native segment (for instance a direct buffer's) through exchange
     *  {@code eid}; the library copies them during the call. */
    public void send(int eid, MemorySegment message) {
        enter();
        try {
            MemorySegment h = live();
            if (!trySend(h, eid, message)) {
                sendParked(h, eid);
            }
        } finally {
            exit();
        }
    }

    /**
     * Sends the frame's message through exchange {@code eid} without copying it (a frame from
     * {@link Frame#allocate(long)} filled through {@link Frame#buffer()}, or one received),
     * waiting for room as long as the handle's send timeout allows; the frame is empty after,
     * as after {@link io.oxmq.Socket#send(Frame, int)}.
     */
    public void send(int eid, Frame frame) {
        enter();
        try {
            MemorySegment m = nonNull(frame, "frame").message();
            MemorySegment h = live();
            try {
                // Most sends find room at once: a critical call that never waits, then the
                // blocking one only when it would have to.
                if ((int) TRY_SEND_MSG.invokeExact(h, eid, m) >= 0) {
                    return;
                }
                int e = (int) ERRNO_NOW.invokeExact();
                if (e != ZmqException.EAGAIN) {
                    throw new ZmqException("send(" + eid + ")", e);
                }
                int rc = (int) SEND_MSG.invokeExact(state, h, eid, m);
                check(rc, "send(" + eid + ")");
            } catch (Throwable t) {
                throw rethrow(t);
            }
        } finally {
            exit();
        }
    }

    /**
     * Waits for the next message on any queue of this handle and puts it in {@code frame}
     * without copying it (read it with {@link Frame#data()}); returns its size. What the
     * frame held is released. Interruptible like {@link #receive()}.
     */
    public long receive(Frame frame) {
        enter();
        try {
            MemorySegment m = nonNull(frame, "frame").message();
            MemorySegment h = live();
            try {
                int rc = (int) RECEIVE_MSG_NOW.invokeExact(h, m, 0);
                if (rc >= 0) {
                    return rc;
                }
                int e = (int) ERRNO_NOW.invokeExact();
                while (true) {
                    if (e != ZmqException.EAGAIN) {
                        throw new ZmqException("receive", e);
                    }
                    if (Thread.currentThread().isInterrupted()) {
                        throw new ZmqInterruptedException("receive");
                    }
                    rc = (int) RECEIVE_MSG.invokeExact(state, h, m, RECEIVE_SLICE_MS);
                    if (rc >= 0) {
                        return rc;
                    }
                    e = errno();
                }
            } catch (Throwable t) {
                throw rethrow(t);
            }
        } finally {
            exit();
        }
    }

    /**
     * Sends a copy of {@code message} (heap or native) if that needs no wait: true. False when
     * it would wait or the exchange is one the quick path does not take; nothing was sent, and
     * the library keeps the copy for {@link #sendParked}.
     */
    private boolean trySend(MemorySegment h, int eid, MemorySegment message) {
        try {
            int rc = (int) TRY_SEND.invokeExact(h, eid, message, message.byteSize());
            if (rc == 0) {
                return true;
            }
            int e = (int) ERRNO_NOW.invokeExact();
            if (e != ZmqException.EAGAIN) {
                throw new ZmqException("send(" + eid + ")", e);
            }
            return false;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Waits for the next message on any queue of this handle. The wait ends with a
     * {@link ZmqInterruptedException} when the thread is interrupted (the interrupt stays set).
     */
    public byte[] receive() {
        while (true) {
            byte[] m = receive(RECEIVE_SLICE_MS);
            if (m != null) {
                return m;
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new ZmqInterruptedException("receive");
            }
        }
    }

    /** Waits up to {@code timeoutMs} (-1: forever) for the next message; {@code null} when none came. */
    public byte[] receive(int timeoutMs) {
        enter();
        try {
            long n = receiveNow(recvBuf);
            if (n == -1) {
                n = nextInto(timeoutMs);
            }
            if (n < 0) {
                return null;
            }
            return n == 0 ? new byte[0] : recvBuf.asSlice(0, n).toArray(JAVA_BYTE);
        } finally {
            exit();
        }
    }

    /**
     * Waits for the next message and copies it into {@code buffer}, allocating nothing; returns
     * the message's full length (when larger than the buffer, only {@code buffer.length} bytes
     * were stored, as {@code zmq_recv} does). Interruptible like {@link #receive()}.
     */
    public int receive(byte[] buffer) {
        enter();
        try {
            nonNull(buffer, "buffer");
            MemorySegment dst = MemorySegment.ofArray(buffer);
            long n = receiveNow(dst);
            if (n >= 0) {
                return (int) Math.min(n, Integer.MAX_VALUE);
            }
            // Wait without taking the message, then copy it straight into the array: a message
            // taken by the waiting (non-critical) call would land in native memory first and be
            // copied twice.
            while ((n = await(RECEIVE_SLICE_MS)) < 0) {
                if (Thread.currentThread().isInterrupted()) {
                    throw new ZmqInterruptedException("receive");
                }
            }
            if (n == 0) {
                return 0; // an empty message, taken by the wait
            }
            n = receiveNow(dst);
            if (n >= 0) {
                return (int) Math.min(n, Integer.MAX_VALUE);
            }
            // Longer than the array: through the native buffer, stored truncated below.
            while ((n = nextInto(RECEIVE_SLICE_MS)) < 0) {
                if (Thread.currentThread().isInterrupted()) {
                    throw new ZmqInterruptedException("receive");
                }
            }
            int k = (int) Math.min(n, buffer.length);
            if (k > 0) {
                MemorySegment.copy(recvBuf, JAVA_BYTE, 0, buffer, 0, k);
            }
            return (int) Math.min(n, Integer.MAX_VALUE);
        } finally {
            exit();
        }
    }

    /**
     * A message already queued, copied straight into {@code dst} (heap or native) without
     * waiting: its length; -1 when none is queued or it is longer than {@code dst} (the handle
     * then keeps it for the next receive, which {@link #nextInto} makes).
     */
    private long receiveNow(MemorySegment dst) {
        MemorySegment h = live();
        int rc;
        try {
            rc = (int) RECEIVE_NOW.invokeExact(h, dst, dst.byteSize(), out, 0);
            if (rc == 0) {
                return out.get(JAVA_LONG, 0);
            }
            int e = (int) ERRNO_NOW.invokeExact();
            if (e != ZmqException.EAGAIN && e != ZmqException.EMSGSIZE) {
                throw new ZmqException("receive", e);
            }
            return -1;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** One czmq_receive_into into {@code recvBuf}, grown and asked again when the message is
     *  longer (the library keeps it meanwhile): its length, or -1 on timeout. */
    /** Sends the copy {@link #trySend} left with the library, waiting for room as long as the
     *  handle's send timeout allows (czmq_send_parked, a non-critical downcall). */
    private void sendParked(MemorySegment h, int eid) {
        try {
            int rc = (int) SEND_PARKED.invokeExact(state, h, eid);
            check(rc, "send(" + eid + ")");
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Waits up to {@code timeoutMs} for a message and leaves it queued for the next receive
     * (czmq_receive_into with no room: EMSGSIZE and its length): its length, 0 for an empty
     * message (which the call took), or -1 on timeout.
     */
    private long await(int timeoutMs) {
        MemorySegment h = live();
        int rc;
        try {
            rc = (int) RECEIVE_INTO.invokeExact(state, h, MemorySegment.NULL, 0L, out, timeoutMs);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc == 0) {
            return 0;
        }
        int e = errno();
        if (e == ZmqException.EAGAIN) {
            return -1;
        }
        if (e != ZmqException.EMSGSIZE) {
            throw new ZmqException("receive", e);
        }
        return out.get(JAVA_LONG, 0);
    }

    private long nextInto(int timeoutMs) {
        MemorySegment h = live();
        while (true) {
            int rc;
            try {
                rc = (int) RECEIVE_INTO.invokeExact(state, h, recvBuf, recvBuf.byteSize(), out, timeoutMs);
            } catch (Throwable t) {
                throw rethrow(t);
            }
            if (rc == 0) {
                return out.get(JAVA_LONG, 0);
            }
            int e = errno();
            if (e == ZmqException.EAGAIN) {
                return -1;
            }
            if (e != ZmqException.EMSGSIZE) {
                throw new ZmqException("receive", e);
            }
            long need = out.get(JAVA_LONG, 0);
            if (need > Integer.MAX_VALUE - 8) {
                // No byte[] holds it: take it off the queue and say so.
                if (next(0)) {
                    release(out.get(ADDRESS, 16), out.get(ADDRESS, 0));
                }
                throw new ZmqException("receive: a message of " + need + " bytes does not fit a byte[]", ZmqException.EMSGSIZE);
            }
            recvBuf = arena.allocate(Math.max(need, recvBuf.byteSize() * 2), 8);
            timeoutMs = 0;
        }
    }

    /** One czmq_receive_ex: true with the message in {@code out}, false on timeout. */
    private boolean next(int timeoutMs) {
        MemorySegment h = live();
        int rc;
        try {
            rc = (int) RECEIVE.invokeExact(state, h, out, out.asSlice(8), out.asSlice(16), timeoutMs);
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (rc != 0) {
            int e = errno();
            if (e == ZmqException.EAGAIN) {
                return false;
            }
            throw new ZmqException("receive", e);
        }
        return true;
    }

    /** The ZMTP endpoint of a global exchange or queue, for plain ZeroMQ peers (a SUB connects to
     *  an exchange's, a PUSH to a queue's). */
    public String lookup(String name) {
        enter();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(1024);
            int rc = (int) LOOKUP.invokeExact(state, live(), a.allocateFrom(nonNull(name, "name")), buf, buf.byteSize());
            check(rc, "lookup(\"" + name + "\")");
            return buf.getString(0);
        } catch (Throwable t) {
            throw rethrow(t);
        } finally {
            exit();
        }
    }

    /** Withdraws this handle's global names and closes its wires, delivering what was sent
     *  (bounded by the wiring linger). Later calls on the handle throw; closing twice is a no-op. */
    @Override
    public void close() {
        if (handle == null) {
            return;
        }
        if (!guard.tryEnter()) {
            throw new IllegalStateException("the Jzmq handle is in use by another thread; close it there"
                    + " (interrupt a receive to end it)");
        }
        try {
            closeInside();
        } finally {
            exit();
        }
    }

    private void closeInside() {
        MemorySegment h = handle;
        if (h == null) {
            return;
        }
        handle = null;
        int rc;
        try {
            rc = (int) DESTROY.invokeExact(state, h);
        } catch (Throwable t) {
            arena.close();
            throw rethrow(t);
        }
        int e = rc < 0 ? errno() : 0; // read before the arena holding it goes
        arena.close();
        if (rc < 0) {
            throw new ZmqException("close", e);
        }
    }

    private static void release(MemorySegment free, MemorySegment data) {
        if (free.equals(MemorySegment.NULL)) {
            return;
        }
        try {
            CALL_FREE.invokeExact(free, data);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Enters the handle for one call. A handle is used by one thread at a time: a call while
     * another thread is inside, or after {@link #close()}, throws {@link IllegalStateException}
     * and never reaches the native handle, so misuse cannot race on it or use it freed.
     */
    private void enter() {
        if (!guard.tryEnter()) throw guard.busy("the Jzmq handle", "a handle is used by one thread at a time");
        if (handle == null) {
            exit();
            throw new IllegalStateException("the Jzmq handle is closed");
        }
    }

    private void exit() {
        guard.exit();
    }

    /** The native handle, for a call inside the handle ({@link #enter()}). */
    private MemorySegment live() {
        return handle;
    }

    private int errno() {
        return (int) ERRNO.get(state, 0L);
    }

    private int check(int rc, String what) {
        if (rc < 0) {
            int e = errno();
            throw e == ZmqException.EAGAIN ? new AgainException(what) : new ZmqException(what, e);
        }
        return rc;
    }

    private static <T> T nonNull(T v, String what) {
        if (v == null) {
            throw new NullPointerException(what);
        }
        return v;
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
