package org.zeromq;

import java.io.Closeable;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * JeroMQ's ZContext: a context that keeps track of its sockets and closes them (with linger
 * 0 by default) when it is closed.
 */
public class ZContext implements Closeable {
    private final ZMQ.Context context;
    private final List<ZMQ.Socket> sockets = new CopyOnWriteArrayList<>();
    private final boolean main;
    private volatile int linger = 0;
    private volatile boolean closed;

    /** A context with one I/O thread. */
    public ZContext() {
        this(1);
    }

    /** A context with {@code ioThreads} I/O threads. */
    public ZContext(int ioThreads) {
        this(ZMQ.context(ioThreads), true);
    }

    private ZContext(ZMQ.Context context, boolean main) {
        this.context = context;
        this.main = main;
    }

    /** A context sharing {@code ctx}'s ZMQ context, with its own sockets (closing it does not
     *  terminate the shared context). */
    public static ZContext shadow(ZContext ctx) {
        return new ZContext(ctx.context, false);
    }

    /** A new socket, closed with this context. */
    public ZMQ.Socket createSocket(SocketType type) {
        ZMQ.Socket s = context.socket(type);
        sockets.add(s);
        return s;
    }

    /** A new socket of type number {@code type}. */
    @Deprecated
    public ZMQ.Socket createSocket(int type) {
        return createSocket(SocketType.type(type));
    }

    /** Closes {@code s} (with this context's linger) and forgets it. */
    public void destroySocket(ZMQ.Socket s) {
        if (s == null) return;
        sockets.remove(s);
        try {
            if (!s.oxmqSocket().isClosed()) {
                s.setLinger(linger);
                s.close();
            }
        } catch (RuntimeException ignored) {
            // already closed by the context's termination
        }
    }

    /** A poller with room for {@code size} items. */
    public ZMQ.Poller createPoller(int size) {
        return context.poller(size);
    }

    /** The underlying context. */
    public ZMQ.Context getContext() {
        return context;
    }

    /** The sockets made here and not destroyed yet. */
    public List<ZMQ.Socket> getSockets() {
        return sockets;
    }

    /** Linger applied to sockets closed by this context (ms). */
    public void setLinger(int linger) {
        this.linger = linger;
    }

    /** Linger applied to sockets closed by this context. */
    public int getLinger() {
        return linger;
    }

    /** Whether this is not a shadow. */
    public boolean isMain() {
        return main;
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    /** Closes every socket and, unless a shadow, terminates the context. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (ZMQ.Socket s : sockets) {
            try {
                if (!s.oxmqSocket().isClosed()) s.setLinger(linger);
            } catch (RuntimeException busyOrClosed) {
                // a socket busy in another thread is closed by the context's termination
            }
            try {
                s.close();
            } catch (RuntimeException busy) {
                // ends with ETERM in its own thread, which closes it
            }
        }
        sockets.clear();
        if (main) context.term();
    }

    /** Same as {@link #close()}. */
    public void destroy() {
        close();
    }
}
