package io.oxmq;

import io.oxmq.internal.Guard;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * One ZeroMQ frame in the library's memory (a {@code zmq_msg_t}), reusable for many sends and
 * receives: the zero-copy path in both directions.
 *
 * <p>Receiving: {@link Socket#recv(Frame, int)} makes the frame view the library's buffer;
 * {@link #size()}, {@link #byteAt(long)}, {@link #copyTo(byte[], int)} read it without
 * allocating, {@link #data()} gives a read-only segment over it. That view is valid until the
 * next receive into the frame or its {@link #close()}; using it later throws
 * {@link IllegalStateException} (the segment's scope is closed), it never reads freed memory.
 * Views are confined to the thread that asked for them.
 *
 * <p>Sending: {@link #allocate(long)} gives the frame a fresh buffer of that size in the
 * library, {@link #buffer()} a writable segment over it, and {@link Socket#send(Frame, int)}
 * hands the buffer to the library as it is; the frame is empty afterwards.
 *
 * <p>A frame is used by one thread at a time (it may move between threads); a second thread
 * calling into it meanwhile gets {@link IllegalStateException}, as with a {@link Socket}.
 */
public final class Frame implements AutoCloseable {
    private final MemorySegment msg;
    private final Guard guard = new Guard();
    private Arena viewArena;
    private MemorySegment view;
    private boolean closed;
    /** The message's size when the binding knows it (it set or received the message), else -1;
     *  saves a native call per {@link #size()}. */
    private long knownSize;
    /** Whether the message holds nothing to release: just initialised, or sent. */
    private boolean bare;

    /** An empty frame. */
    public Frame() {
        msg = Arena.ofAuto().allocate(Native.MSG_T_SIZE, 8);
        try {
            int rc = (int) Native.zmq_msg_init.invokeExact(msg.address());
            if (rc != 0) throw new ZmqException("zmq_msg_init", ZmqException.EFAULT);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        bare();
    }

    private void bare() {
        bare = true;
        knownSize = 0;
    }

    /** A frame holding a copy of {@code data}. */
    public static Frame of(byte[] data) {
        Frame f = new Frame();
        f.allocate(data.length);
        f.enter();
        try {
            MemorySegment.copy(data, 0, Native.ALL, JAVA_BYTE, f.dataAddress(), data.length);
        } finally {
            f.exit();
        }
        return f;
    }

    /** Enters the frame (see the class doc); {@link Socket} does too while it sends or receives
     *  it. Throws when another thread is inside or the frame is closed. */
    void enter() {
        if (!guard.tryEnter()) throw guard.busy("frame", "a Frame is used by one thread at a time");
        if (closed) {
            guard.exit();
            throw new IllegalStateException("frame is closed");
        }
    }

    void exit() {
        guard.exit();
    }

    /** The {@code zmq_msg_t}'s address; the caller is inside the frame. */
    long msgAddress() {
        return msg.address();
    }

    private void dropView() {
        if (viewArena != null) {
            viewArena.close();
            viewArena = null;
            view = null;
        }
    }

    /** The caller is inside the frame. */
    void beforeReceive() {
        dropView();
        // A receive that fails may still have released the old content (libzmq does).
        bare = false;
        knownSize = -1;
    }

    /** A receive into the frame returned {@code rc}. */
    void received(int rc) {
        bare = false;
        // zmq_msg_recv says INT_MAX for every frame from 2 GiB - 1 on: ask for those.
        knownSize = rc == Integer.MAX_VALUE ? -1 : rc;
    }

    void sent() {
        dropView();
        bare();
    }

    /** Replaces the content with a new uninitialised buffer of {@code size} bytes, to be filled
     *  through {@link #buffer()} and sent. */
    public Frame allocate(long size) {
        enter();
        try {
            long m = msg.address();
            dropView();
            if (!bare) {
                int unused = (int) Native.zmq_msg_close.invokeExact(m);
            }
            int rc = (int) Native.zmq_msg_init_size.invokeExact(m, size);
            if (rc != 0) {
                int ignored = (int) Native.zmq_msg_init.invokeExact(m);
                bare();
                throw ZmqException.of("zmq_msg_init_size", Native.lastErrno());
            }
            bare = false;
            knownSize = size;
            return this;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** The caller is inside the frame. */
    private long dataAddress() {
        try {
            return (long) Native.zmq_msg_data.invokeExact(msg.address());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The caller is inside the frame. */
    private long sizeInside() {
        if (knownSize >= 0) return knownSize;
        try {
            return (long) Native.zmq_msg_size.invokeExact(msg.address());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** The frame's size in bytes. */
    public long size() {
        long k = knownSize;
        if (k >= 0 && !closed) return k;
        enter();
        try {
            return sizeInside();
        } finally {
            exit();
        }
    }

    /** Whether more frames of the same message follow this received one. */
    public boolean hasMore() {
        enter();
        try {
            return (int) Native.zmq_msg_more.invokeExact(msg.address()) != 0;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** The byte at {@code index}. */
    public byte byteAt(long index) {
        enter();
        try {
            Objects.checkIndex(index, sizeInside());
            return Native.ALL.get(JAVA_BYTE, dataAddress() + index);
        } finally {
            exit();
        }
    }

    /** Copies up to {@code dst.length - off} bytes into {@code dst} at {@code off}; returns the
     *  number copied. */
    public int copyTo(byte[] dst, int off) {
        Objects.checkIndex(off, dst.length + 1);
        enter();
        try {
            return copyInside(dst, off);
        } finally {
            exit();
        }
    }

    private int copyInside(byte[] dst, int off) {
        int n = (int) Math.min(sizeInside(), dst.length - off);
        if (n > 0) MemorySegment.copy(Native.ALL, JAVA_BYTE, dataAddress(), dst, off, n);
        return n;
    }

    /** The content as a new array; {@link ZmqException} (EMSGSIZE) for a frame too large for
     *  one (read it through {@link #data()}). */
    public byte[] toByteArray() {
        enter();
        try {
            long size = sizeInside();
            if (size > Socket.MAX_ARRAY) throw Socket.tooLargeForArray("toByteArray", size);
            byte[] b = new byte[(int) size];
            copyInside(b, 0);
            return b;
        } finally {
            exit();
        }
    }

    /** The content decoded as UTF-8. */
    public String toStringUtf8() {
        return new String(toByteArray(), StandardCharsets.UTF_8);
    }

    /** A read-only view of the content, valid until the next receive into this frame, a send
     *  of it, or its close (confined to the calling thread). */
    public MemorySegment data() {
        enter();
        try {
            if (view == null) {
                viewArena = Arena.ofConfined();
                view = MemorySegment.ofAddress(dataAddress()).reinterpret(sizeInside(), viewArena, null).asReadOnly();
            }
            return view;
        } finally {
            exit();
        }
    }

    /** A writable view of the content, for filling a frame made with {@link #allocate(long)};
     *  same lifetime as {@link #data()}. */
    public MemorySegment buffer() {
        enter();
        try {
            dropView();
            viewArena = Arena.ofConfined();
            view = MemorySegment.ofAddress(dataAddress()).reinterpret(sizeInside(), viewArena, null);
            return view;
        } finally {
            exit();
        }
    }

    /**
     * The frame's {@code zmq_msg_t} (64 bytes), for native functions that take one, such as the
     * wiring API's {@code czmq_send_msg} and {@code czmq_receive_msg} (which
     * {@code io.oxmq.wiring.Jzmq} calls with it). Views from {@link #data()} and
     * {@link #buffer()} end here, since such a call may replace the message; take new ones
     * after it.
     */
    public MemorySegment message() {
        enter();
        try {
            dropView();
            bare = false;
            knownSize = -1;
            return msg;
        } finally {
            exit();
        }
    }

    /** SERVER, PEER (draft): the peer a received frame came from, or the one it is to be sent
     *  to; 0 when none ({@code zmq_msg_routing_id}). */
    public int routingId() {
        enter();
        try {
            return (int) Native.zmq_msg_routing_id.invokeExact(msg.address());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** Addresses the frame to a SERVER's or PEER's peer; 0 is refused (EINVAL), as
     *  {@code zmq_msg_set_routing_id}. */
    public Frame setRoutingId(int routingId) {
        enter();
        try {
            int rc = (int) Native.zmq_msg_set_routing_id.invokeExact(msg.address(), routingId);
            if (rc != 0) throw ZmqException.of("zmq_msg_set_routing_id", Native.lastErrno());
            return this;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** RADIO, DISH (draft): the group a received frame came in, or the one it is to be sent
     *  to; "" when none ({@code zmq_msg_group}). */
    public String group() {
        enter();
        try {
            long p = (long) Native.zmq_msg_group.invokeExact(msg.address());
            return p == 0 ? "" : MemorySegment.ofAddress(p).reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** Sets the group a RADIO sends the frame to (at most 255 bytes of UTF-8, else EINVAL, as
     *  {@code zmq_msg_set_group}). */
    public Frame setGroup(String group) {
        Objects.requireNonNull(group, "group");
        enter();
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) Native.zmq_msg_set_group.invokeExact(msg.address(), a.allocateFrom(group).address());
            if (rc != 0) throw ZmqException.of("zmq_msg_set_group", Native.lastErrno());
            return this;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** A message property of a received frame ("Socket-Type", "User-Id", "Peer-Address",
     *  "TLS-Peer-Subject" over tls:// and wss:// from a peer whose certificate was verified, or
     *  one the peer sent in its handshake), or {@code null}. A value may be of any length. */
    public String property(String name) {
        enter();
        try (Arena a = Arena.ofConfined()) {
            long p = (long) Native.zmq_msg_gets.invokeExact(msg.address(), a.allocateFrom(name).address());
            // NUL-terminated and alive as long as the message (zmq_msg_gets' contract); a peer's
            // metadata value may be long, so the string is read to its terminator, wherever it is.
            return p == 0 ? null : MemorySegment.ofAddress(p).reinterpret(Long.MAX_VALUE).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }

    /** Releases the library's buffer. Idempotent. Throws {@link IllegalStateException} when
     *  another thread is inside the frame. */
    @Override
    public void close() {
        if (closed) return;
        if (!guard.tryEnter()) {
            throw new IllegalStateException("frame is in use by another thread; close it there");
        }
        try {
            if (closed) return;
            dropView();
            closed = true;
            int unused = (int) Native.zmq_msg_close.invokeExact(msg.address());
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            exit();
        }
    }
}
