package io.oxmq;

import io.oxmq.internal.Guard;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Waits on several sockets (and plain file descriptors) at once, over {@code zmq_poll}.
 * Register items, call {@link #poll(long)}, then ask {@link #isReadable(int)} /
 * {@link #isWritable(int)} per index. Used by one thread at a time (a second thread registering
 * or polling meanwhile gets {@link IllegalStateException}); allocates nothing per poll.
 *
 * <p>A poll waits in slices of at most {@value Socket#SLICE_MS} ms and ends with
 * {@link ZmqInterruptedException} when its thread is interrupted and {@link TermException}
 * when a polled socket's context is closed. While it waits, the sockets it polls are held
 * like in a call on them (another thread using one gets {@link IllegalStateException}).
 */
public final class Poller implements AutoCloseable {
    private final Arena arena = Arena.ofAuto();
    private final Guard guard = new Guard();
    private MemorySegment items;
    private Socket[] sockets;
    private short[] events;
    private int size;

    /** A poller with room for {@code capacity} items (it grows as needed). */
    public Poller(int capacity) {
        int c = Math.max(1, capacity);
        items = arena.allocate(Native.POLLITEM_SIZE * c, 8);
        sockets = new Socket[c];
        events = new short[c];
    }

    /** A poller with room for 8 items. */
    public Poller() {
        this(8);
    }

    private void enter() {
        if (!guard.tryEnter()) throw guard.busy("poller", "a Poller is used by one thread at a time");
    }

    private int add(Socket s, int fd, int ev) {
        enter();
        try {
            return addInside(s, fd, ev);
        } finally {
            guard.exit();
        }
    }

    private int addInside(Socket s, int fd, int ev) {
        if (size == sockets.length) {
            int c = sockets.length * 2;
            MemorySegment n = arena.allocate(Native.POLLITEM_SIZE * c, 8);
            n.copyFrom(items);
            items = n;
            sockets = Arrays.copyOf(sockets, c);
            events = Arrays.copyOf(events, c);
        }
        int i = size++;
        long base = i * Native.POLLITEM_SIZE;
        items.set(JAVA_LONG, base + Native.POLLITEM_SOCKET, s == null ? 0 : s.handle);
        items.set(JAVA_INT, base + Native.POLLITEM_FD, fd);
        items.set(Native.SHORT, base + Native.POLLITEM_EVENTS, (short) ev);
        items.set(Native.SHORT, base + Native.POLLITEM_REVENTS, (short) 0);
        sockets[i] = s;
        events[i] = (short) ev;
        return i;
    }

    /** Adds {@code socket} for {@code events} ({@link Zmq#POLLIN}, {@link Zmq#POLLOUT}); returns its index. */
    public int register(Socket socket, int events) {
        if (socket.isClosed()) throw new IllegalStateException("socket is closed");
        return add(socket, 0, events);
    }

    /** Adds a plain file descriptor; returns its index. */
    public int registerFd(int fd, int events) {
        return add(null, fd, events);
    }

    /** Removes the item at {@code index}; later items move down by one. */
    public void unregister(int index) {
        enter();
        try {
            removeInside(index);
        } finally {
            guard.exit();
        }
    }

    private void removeInside(int index) {
        java.util.Objects.checkIndex(index, size);
        long from = (index + 1) * Native.POLLITEM_SIZE, to = index * Native.POLLITEM_SIZE;
        MemorySegment.copy(items, from, items, to, (size - index - 1) * Native.POLLITEM_SIZE);
        System.arraycopy(sockets, index + 1, sockets, index, size - index - 1);
        System.arraycopy(events, index + 1, events, index, size - index - 1);
        sockets[--size] = null;
    }

    /** Removes every item of {@code socket}. */
    public void unregister(Socket socket) {
        enter();
        try {
            for (int i = size - 1; i >= 0; i--) if (sockets[i] == socket) removeInside(i);
        } finally {
            guard.exit();
        }
    }

    /** The number of items. */
    public int size() {
        return size;
    }

    /** The socket at {@code index} ({@code null} for a file descriptor). */
    public Socket socket(int index) {
        java.util.Objects.checkIndex(index, size);
        return sockets[index];
    }

    /**
     * Waits until an item is ready or {@code timeoutMs} passes (-1: no limit, 0: just look).
     * Returns the number of ready items.
     */
    public int poll(long timeoutMs) {
        enter();
        int entered = 0;
        try {
            for (; entered < size; entered++) {
                if (first(entered)) sockets[entered].enterForeign();
            }
            long deadline = timeoutMs < 0 ? 0 : System.nanoTime() + timeoutMs * 1_000_000L;
            for (;;) {
                for (int i = 0; i < size; i++) items.set(Native.SHORT, i * Native.POLLITEM_SIZE + Native.POLLITEM_REVENTS, (short) 0);
                long slice;
                if (timeoutMs < 0) {
                    slice = Socket.SLICE_MS;
                } else {
                    slice = Math.max(0, Math.min(Socket.SLICE_MS, (deadline - System.nanoTime() + 999_999) / 1_000_000L));
                }
                int rc = (int) Native.zmq_poll.invokeExact(items.address(), size, slice);
                if (rc > 0) return rc;
                if (rc < 0) {
                    int e = Native.lastErrno();
                    if (e != ZmqException.EINTR) throw ZmqException.of("zmq_poll", e);
                }
                if (Thread.currentThread().isInterrupted()) throw new ZmqInterruptedException("zmq_poll");
                if (timeoutMs >= 0 && System.nanoTime() - deadline >= 0) return 0;
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            for (int i = 0; i < entered; i++) {
                if (first(i)) sockets[i].exitForeign();
            }
            guard.exit();
        }
    }

    /** Whether index {@code i} holds a socket not registered at a lower index. */
    private boolean first(int i) {
        Socket s = sockets[i];
        if (s == null) return false;
        for (int j = 0; j < i; j++) if (sockets[j] == s) return false;
        return true;
    }

    private short revents(int index) {
        java.util.Objects.checkIndex(index, size);
        return items.get(Native.SHORT, index * Native.POLLITEM_SIZE + Native.POLLITEM_REVENTS);
    }

    /** Whether the item at {@code index} can receive after the last poll. */
    public boolean isReadable(int index) {
        return (revents(index) & Zmq.POLLIN) != 0;
    }

    /** Whether the item at {@code index} can send after the last poll. */
    public boolean isWritable(int index) {
        return (revents(index) & Zmq.POLLOUT) != 0;
    }

    /** Whether the item at {@code index} reported an error. */
    public boolean isError(int index) {
        return (revents(index) & Zmq.POLLERR) != 0;
    }

    /** The events registered for {@code index}. */
    public int events(int index) {
        java.util.Objects.checkIndex(index, size);
        return events[index];
    }

    /** Forgets every item. */
    @Override
    public void close() {
        enter();
        try {
            Arrays.fill(sockets, null);
            size = 0;
        } finally {
            guard.exit();
        }
    }
}
