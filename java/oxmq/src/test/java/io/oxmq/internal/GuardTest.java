package io.oxmq.internal;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.*;

/** The socket guard lets one thread in at a time, however they interleave. */
@Timeout(60)
class GuardTest {
    /** Written and read only by the thread inside the guard, plainly, as a socket's state is. */
    private Thread occupant;
    private long counter;

    @Test
    void threadsRacingForABiasedGuardAreNeverInsideTogether() throws Exception {
        // Many short races, each started together: a thread running alone for its time slice
        // shows nothing, the moments where the guard changes hands do.
        for (int race = 0; race < 40; race++) race(() -> new Guard(Integer.MAX_VALUE), 3, 20_000);
    }

    @Test
    void threadsRacingForASharedGuardAreNeverInsideTogether() throws Exception {
        for (int race = 0; race < 20; race++) race(() -> new Guard(0), 3, 20_000);
    }

    @Test
    void threadsRacingAsTheGuardStopsBeingBiasedAreNeverInsideTogether() throws Exception {
        for (int race = 0; race < 40; race++) {
            int handovers = race % 8;
            race(() -> new Guard(handovers), 3, 5_000);
        }
    }

    private void race(Supplier<Guard> make, int threads, int rounds) throws Exception {
        Guard g = make.get();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<CompletableFuture<long[]>> all = new ArrayList<>();
        counter = 0;
        for (int i = 0; i < threads; i++) {
            all.add(CompletableFuture.supplyAsync(() -> {
                long entered = 0, overlaps = 0;
                Thread me = Thread.currentThread();
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int r = 0; r < rounds; r++) {
                    if (!g.tryEnter()) continue;
                    entered++;
                    if (occupant != null) overlaps++;
                    occupant = me;
                    for (int k = 0; k < 20; k++) counter++;
                    if (occupant != me) overlaps++;
                    occupant = null;
                    g.exit();
                }
                return new long[] {entered, overlaps};
            }, r -> Thread.ofPlatform().start(r)));
        }
        long entered = 0;
        for (CompletableFuture<long[]> f : all) {
            long[] got = f.get(50, TimeUnit.SECONDS);
            assertEquals(0, got[1], "threads found each other inside the guard");
            entered += got[0];
        }
        assertTrue(entered > 0);
        assertEquals(entered * 20, counter, "increments made inside the guard were lost");
        assertFalse(g.occupied());
    }

    @Test
    void ownershipMovesToTheNextThreadWhenNobodyIsInside() throws Exception {
        Guard g = new Guard();
        assertTrue(g.tryEnter());
        g.exit();
        boolean[] got = new boolean[1];
        Thread other = Thread.ofPlatform().start(() -> {
            got[0] = g.tryEnter();
            g.exit();
        });
        other.join(10_000);
        assertTrue(got[0]);
        assertSame(other, g.owner());
        assertTrue(g.tryEnter(), "the first thread takes it back");
        g.exit();
        assertFalse(g.isShared());
    }

    @Test
    void aThreadInsideKeepsItAndTheNewcomerIsToldWho() throws Exception {
        for (Guard g : new Guard[] {new Guard(), new Guard(0)}) {
            assertTrue(g.tryEnter());
            try {
                CompletableFuture<Boolean> other = CompletableFuture.supplyAsync(g::tryEnter, r -> Thread.ofPlatform().start(r));
                assertFalse(other.get(10, TimeUnit.SECONDS));
                assertSame(Thread.currentThread(), g.owner());
                assertTrue(g.occupied());
            } finally {
                g.exit();
            }
            assertFalse(g.occupied());
        }
    }

    @Test
    void aThreadInsideCannotEnterAgain() {
        for (Guard g : new Guard[] {new Guard(), new Guard(0)}) {
            assertTrue(g.tryEnter());
            assertFalse(g.tryEnter(), "a second entry would end the first one's protection at its exit");
            g.exit();
            assertFalse(g.occupied());
            assertTrue(g.tryEnter());
            g.exit();
        }
    }

    @Test
    void aGuardPassedBackAndForthStopsBeingBiasedAndStillKeepsOneThreadIn() throws Exception {
        Guard g = new Guard();
        SynchronousQueue<String> toOther = new SynchronousQueue<>(), back = new SynchronousQueue<>();
        Thread other = Thread.ofPlatform().start(() -> {
            try {
                for (;;) {
                    if (toOther.take().equals("stop")) return;
                    if (g.tryEnter()) {
                        g.exit();
                        back.put("in");
                    } else {
                        back.put("refused");
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        for (int i = 0; i < 2 * Guard.MAX_HANDOVERS; i++) {
            assertTrue(g.tryEnter());
            g.exit();
            toOther.put("go");
            assertEquals("in", back.take());
        }
        assertTrue(g.isShared());
        assertTrue(g.tryEnter());
        toOther.put("go");
        assertEquals("refused", back.take());
        assertSame(Thread.currentThread(), g.owner());
        g.exit();
        toOther.put("stop");
        other.join(10_000);
    }
}
