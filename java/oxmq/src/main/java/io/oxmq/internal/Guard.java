package io.oxmq.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Keeps a second thread out of a non-thread-safe socket (or a frame, a poller, a wiring handle)
 * while one is inside, without an atomic instruction on the path its usual thread takes. A thread already
 * inside is refused too, as a second entry would end the first one's protection at its exit.
 *
 * <p>The guard is biased to an <em>owner</em>, the last thread that took it. Each thread that
 * owns the guard gets its own {@link Ticket}, whose flag only that thread writes. The owner
 * enters by raising its flag and then checking that its ticket is still the current one.
 * Another thread takes the guard on the slow path, under a lock: it installs a ticket of its
 * own, runs an asymmetric barrier ({@link Membarrier}) and then looks at the previous owner's
 * flag. Either the previous owner raised it before that barrier, and the newcomer sees it,
 * puts the old ticket back and fails, or the previous owner's check comes after the barrier,
 * sees the new ticket, lowers its flag and takes the slow path itself. The two never both get
 * in: the classic store-then-load handshake, with the full fence moved from the frequent side
 * to the rare one. Where the asymmetric barrier is not available the owner fences instead.
 *
 * <p>A guard that changes hands often (more than {@code maxHandovers} times, for a socket
 * shared by a pool of threads) stops being biased: it switches for good to one shared flag,
 * taken with a compare-and-set, so no call waits for a barrier.
 *
 * <p>Leaving ({@link #exit()}) is a release store, so a thread that enters next sees everything
 * done inside the native library before it.
 */
public final class Guard {
    /** One owner's announcement flag; only {@link #thread} raises or lowers it. */
    static final class Ticket {
        final Thread thread;
        @SuppressWarnings("unused") // accessed through INSIDE
        int inside;

        Ticket(Thread thread) {
            this.thread = thread;
        }
    }

    private static final VarHandle INSIDE;

    static {
        try {
            INSIDE = MethodHandles.lookup().findVarHandle(Ticket.class, "inside", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final boolean ASYMMETRIC = Membarrier.AVAILABLE;
    private static final Ticket NOBODY = new Ticket(null);
    /** Handovers after which a guard stops being biased. */
    static final int MAX_HANDOVERS = 64;

    private final int maxHandovers;
    /** The shared flag, once the guard is no longer biased. */
    private final Ticket shared = new Ticket(null);
    /** The owner's ticket, or {@link #shared}. Changed under {@code this} lock only. */
    private volatile Ticket ticket = NOBODY;
    /** The ticket of the thread inside; written by that thread. */
    private Ticket entered;
    /** Unbiased: the thread that entered last (for messages only, so written plainly). */
    private Thread holder;
    private int handovers; // under this lock

    /** A guard that nobody has entered yet. */
    public Guard() {
        this(MAX_HANDOVERS);
    }

    Guard(int maxHandovers) {
        this.maxHandovers = maxHandovers;
    }

    /** Enters, or returns false when another thread is inside (or this one already is). */
    public boolean tryEnter() {
        Thread t = Thread.currentThread();
        Ticket k = ticket;
        if (k.thread == t) {
            if ((int) INSIDE.getOpaque(k) != 0) return false; // t is inside already
            INSIDE.setOpaque(k, 1);
            if (ASYMMETRIC) {
                // Only the compiler must keep the store above before the load below; the
                // processor's store buffer is drained by the membarrier of a thread taking the
                // guard. HotSpot compiles every VarHandle fence as a barrier to all memory
                // operations, and this one to no instruction on x86.
                VarHandle.acquireFence();
            } else {
                VarHandle.fullFence();
            }
            if (ticket == k) {
                entered = k;
                return true;
            }
            INSIDE.setOpaque(k, 0);
        } else if (k == shared) {
            return enterShared(t);
        }
        return enterSlow(t);
    }

    /**
     * The exception for a {@link #tryEnter()} that just failed: "{@code what} is in use by
     * thread T; {@code rule}", naming the thread inside.
     */
    public IllegalStateException busy(String what, String rule) {
        Thread other = owner();
        return new IllegalStateException(what + " is in use by thread "
                + (other == null ? "?" : other.getName()) + "; " + rule);
    }

    /** Leaves; only after a {@link #tryEnter()} that returned true, on the same thread. */
    public void exit() {
        INSIDE.setRelease(entered, 0);
    }

    /** The thread inside when {@link #tryEnter()} just failed (else the last one; may be null). */
    public Thread owner() {
        Ticket k = ticket;
        return k == shared ? holder : k.thread;
    }

    /** Whether a thread is inside now (a diagnostic; stale as soon as read). */
    public boolean occupied() {
        return (int) INSIDE.getAcquire(ticket) != 0;
    }

    /** Whether the guard stopped being biased. */
    public boolean isShared() {
        return ticket == shared;
    }

    private boolean enterShared(Thread t) {
        if (!INSIDE.compareAndSet(shared, 0, 1)) return false;
        entered = shared;
        holder = t;
        return true;
    }

    private synchronized boolean enterSlow(Thread t) {
        Ticket previous = ticket;
        if (previous == shared) return enterShared(t);
        if (previous.thread != t) {
            boolean share = handovers >= maxHandovers;
            Ticket next = share ? shared : new Ticket(t);
            ticket = next;
            if (ASYMMETRIC) Membarrier.run();
            if ((int) INSIDE.getAcquire(previous) != 0) {
                ticket = previous; // the previous owner is inside: leave it the guard
                return false;
            }
            handovers++;
            if (share) return enterShared(t);
            previous = next;
        }
        // previous.thread == t: t's ticket is current (maybe handed back by a thread that failed
        // to take the guard while t was on its way here), and only t raises its flag.
        if ((int) INSIDE.getOpaque(previous) != 0) return false; // t is inside already
        INSIDE.setOpaque(previous, 1);
        entered = previous;
        return true;
    }
}
