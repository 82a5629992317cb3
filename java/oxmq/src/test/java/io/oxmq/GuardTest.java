package io.oxmq;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

/** The socket guard lets one thread in at a time, however they interleave. */
@Timeout(60)
class GuardTest {
    /** Written and read only by the thread inside the guard, plainly, as a socket's state is. */
    private Thread occupant;
    private long counter;

    @Test
    void threadsTakingTurnsAreNeverInsideTogether() throws Exception {
        // Many short races, each started together: a thread running alone for its time slice
        // shows nothing, the moments where ownership moves do.
        for (int race = 0; race < 40; race++) race(new Guard(), 3, 20_000);
    }

    private void race(Guard g, int threads, int rounds) throws Exception {
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
    }

    @Test
    void aThreadInsideKeepsItAndTheNewcomerIsToldWho() throws Exception {
        Guard g = new Guard();
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
