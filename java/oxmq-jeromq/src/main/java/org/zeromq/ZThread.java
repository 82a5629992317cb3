package org.zeromq;

import java.util.concurrent.atomic.AtomicLong;

/** JeroMQ's ZThread: background threads, attached (with a PAIR pipe) or detached. */
public class ZThread {
    private static final AtomicLong SEQ = new AtomicLong();

    private ZThread() {}

    /** A thread body with a pipe back to its parent. */
    public interface IAttachedRunnable {
        /** The body. */
        void run(Object[] args, ZContext ctx, ZMQ.Socket pipe);
    }

    /** A detached thread body. */
    public interface IDetachedRunnable {
        /** The body. */
        void run(Object[] args);
    }

    /** Starts a detached daemon thread. */
    public static void start(IDetachedRunnable runnable, Object... args) {
        Thread t = new Thread(() -> runnable.run(args), "ZThread-" + SEQ.incrementAndGet());
        t.setDaemon(true);
        t.start();
    }

    /** Starts an attached thread on a shadow of {@code ctx}; returns the parent's end of the pipe. */
    public static ZMQ.Socket fork(ZContext ctx, IAttachedRunnable runnable, Object... args) {
        String ep = "inproc://zctx-pipe-" + ProcessHandle.current().pid() + "-" + SEQ.incrementAndGet();
        ZMQ.Socket pipe = ctx.createSocket(SocketType.PAIR);
        pipe.bind(ep);
        ZContext shadow = ZContext.shadow(ctx);
        ZMQ.Socket child = shadow.createSocket(SocketType.PAIR);
        child.connect(ep);
        Thread t = new Thread(() -> {
            try {
                runnable.run(args, shadow, child);
            } catch (ZMQException e) {
                if (e.getErrorCode() != ZMQ.Error.ETERM.getCode()) throw e;
            } finally {
                shadow.close();
            }
        }, "ZThread-" + SEQ.get());
        t.setDaemon(true);
        t.start();
        return pipe;
    }
}
