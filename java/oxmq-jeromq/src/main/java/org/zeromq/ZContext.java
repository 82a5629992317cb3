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
    private volatile boolean main;
    private volatile int linger = 0;
    private volatile int sndhwm = -1; // -1: the library's default
    private volatile int rcvhwm = -1;
    private volatile Thread.UncaughtExceptionHandler uncaughtHandler;
    private volatile Thread.UncaughtExceptionHandler notificationHandler;
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

    /** A context sharing this one's ZMQ context, with its own sockets. */
    public ZContext shadow() {
        return shadow(this);
    }

    /** A new socket, closed with this context; it gets the high-water marks set here, if any. */
    public ZMQ.Socket createSocket(SocketType type) {
        ZMQ.Socket s = context.socket(type);
        if (sndhwm >= 0) s.setSndHWM(sndhwm);
        if (rcvhwm >= 0) s.setRcvHWM(rcvhwm);
        sockets.add(s);
        return s;
    }

    /** Starts {@code runnable} in a thread attached to a new PAIR pipe; see {@link ZThread#fork}. */
    public ZMQ.Socket fork(ZThread.IAttachedRunnable runnable, Object... args) {
        return ZThread.fork(this, runnable, args);
    }

    /** ZMQ_SNDHWM of the sockets made after this call. */
    public void setSndHWM(int hwm) {
        this.sndhwm = hwm;
    }

    /** ZMQ_RCVHWM of the sockets made after this call. */
    public void setRcvHWM(int hwm) {
        this.rcvhwm = hwm;
    }

    /** The number of I/O threads. */
    public int getIoThreads() {
        return context.getIOThreads();
    }

    /** Sets the number of I/O threads; takes effect before the first socket, as in libzmq. */
    public void setIoThreads(int ioThreads) {
        context.setIOThreads(ioThreads);
    }

    /** Whether no socket made here is still open. */
    public boolean isEmpty() {
        return sockets.isEmpty();
    }

    /** Whether closing this context terminates the ZMQ context too. */
    public void setMain(boolean main) {
        this.main = main;
    }

    /**
     * Kept for JeroMQ's API: JeroMQ calls it when one of its Java I/O threads fails. oxmq's I/O
     * threads are native and report failures as errors of the calls, so it is not called.
     */
    public void setUncaughtExceptionHandler(Thread.UncaughtExceptionHandler handler) {
        this.uncaughtHandler = handler;
    }

    /** The handler given to {@link #setUncaughtExceptionHandler}. */
    public Thread.UncaughtExceptionHandler getUncaughtExceptionHandler() {
        return uncaughtHandler;
    }

    /** Kept for JeroMQ's API, like {@link #setUncaughtExceptionHandler}. */
    public void setNotificationExceptionHandler(Thread.UncaughtExceptionHandler handler) {
        this.notificationHandler = handler;
    }

    /** The handler given to {@link #setNotificationExceptionHandler}. */
    public Thread.UncaughtExceptionHandler getNotificationExceptionHandler() {
        return notificationHandler;
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
