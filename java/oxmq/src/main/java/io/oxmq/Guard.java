package io.oxmq;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Keeps a second thread out of a non-thread-safe socket while one is inside, without an atomic
 * instruction on the path a socket's usual thread takes.
 *
 * <p>The guard has an <em>owner</em>, the last thread that entered. The owner enters by
 * announcing itself ({@code inside = 1}) and then checking that it is still the owner. Another
 * thread takes ownership on the slow path, under a lock: it makes itself owner, runs an
 * asymmetric barrier ({@link Membarrier}) and then looks at {@code inside}. Either the old owner
 * announced itself before that barrier, and the newcomer sees it and backs off (its
 * {@link #tryEnter()} fails), or the old owner's check comes after the barrier, sees the new
 * owner and takes the slow path itself. The two never both get in: the classic store-then-load
 * handshake, with the full fence moved from the frequent side to the rare one. Where the
 * asymmetric barrier is not available the owner pays a full fence instead.
 *
 * <p>Leaving ({@link #exit()}) is a release store, so a thread that enters next sees everything
 * done inside the native library before it.
 */
final class Guard {
    private static final VarHandle INSIDE;

    static {
        try {
            INSIDE = MethodHandles.lookup().findVarHandle(Guard.class, "inside", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final boolean ASYMMETRIC = Membarrier.AVAILABLE;

    /** Written under {@code this} lock only; read by the owner on every entry. */
    private volatile Thread owner;
    /** 1 while the owner is inside (or about to check whether it may be); see the class doc. */
    @SuppressWarnings("unused") // accessed through INSIDE
    private int inside;

    /** Enters, or returns false when another thread is inside. */
    boolean tryEnter() {
        Thread t = Thread.currentThread();
        return announce(t) || enterSlow(t);
    }

    /** The thread that entered last (inside now when {@link #tryEnter()} just failed). */
    Thread owner() {
        return owner;
    }

    void exit() {
        INSIDE.setRelease(this, 0);
    }

    /** Whether a thread is inside now (a diagnostic; stale as soon as read). */
    boolean occupied() {
        return (int) INSIDE.getAcquire(this) != 0;
    }

    /** The owner's entry: true when {@code t} is the owner and is now inside. */
    private boolean announce(Thread t) {
        // Another thread's announcement, even withdrawn, makes a newcomer back off: announce
        // only as the owner, so two threads taking turns both make progress.
        if (owner != t) return false;
        INSIDE.setOpaque(this, 1);
        if (ASYMMETRIC) {
            // Only the compiler must keep the store above before the load below; the processor's
            // store buffer is drained by the membarrier of a thread taking ownership. HotSpot
            // compiles every VarHandle fence as a barrier to all memory operations, and this one
            // to no instruction on x86.
            VarHandle.acquireFence();
        } else {
            VarHandle.fullFence();
        }
        if (owner == t) return true;
        INSIDE.setOpaque(this, 0);
        return false;
    }

    private synchronized boolean enterSlow(Thread t) {
        Thread previous = owner;
        if (previous != t) {
            owner = t;
            if (ASYMMETRIC) Membarrier.run();
            if ((int) INSIDE.getAcquire(this) != 0) {
                owner = previous; // the previous owner is inside: leave it the socket
                return false;
            }
        }
        // previous == t: a thread that failed to take ownership handed it back to t while t was
        // on its way here. Nobody else is inside either way.
        INSIDE.setOpaque(this, 1);
        return true;
    }
}
