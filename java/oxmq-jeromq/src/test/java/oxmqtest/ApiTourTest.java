package oxmqtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.zeromq.ZContext;

import guide.ApiTour;

/**
 * {@link ApiTour}, a program written against JeroMQ's API only, run on oxmq here and on JeroMQ
 * 0.6.0 in another JVM: both must print the same lines, and the lines must say what JeroMQ's
 * API promises (checked here, so a shared mistake fails too).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ApiTourTest {
    @Test
    void oxmqAndJeroMQPrintTheSameTour() throws Exception {
        List<String> mine;
        try (ZContext ctx = new ZContext()) {
            mine = ApiTour.all(ctx);
        }
        Process p = new ProcessBuilder(JeroMQ.command("tour")).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "JeroMQ's run ends");
        assertEquals(0, p.exitValue(), output);
        List<String> theirs = Arrays.asList(output.strip().split("\\R"));
        assertEquals(theirs, mine, "oxmq's tour against JeroMQ's");

        assertEquals(40, mine.stream().filter(l -> l.startsWith("a:") || l.startsWith("b:")).count());
        assertTrue(mine.contains("a:x7:true"));
        assertTrue(mine.contains("b:y19"));
        assertTrue(mine.contains("false handler: -1"));
        assertTrue(mine.contains("registered: 2"));
        assertTrue(mine.contains("equal after load true true"));
        assertTrue(mine.contains("unwrap address, then first"));
        assertTrue(mine.contains("truncated load true"));
        assertTrue(mine.contains("keepalive 1 30 4 5"));
        assertTrue(mine.contains("req relaxed is write-only"));
        assertTrue(mine.contains("immediate true delay false"));
        assertTrue(mine.contains("plain admin secret PLAIN"));
        assertTrue(mine.contains("plain server true PLAIN"));
        assertTrue(mine.contains("conflate true"));
        assertTrue(mine.contains("nothing yet true, EAGAIN true"));
        assertTrue(mine.contains("hwm 77 88"));
        assertTrue(mine.contains("dealer 1 got hello"));
        assertTrue(mine.contains("shadow shares true"));
    }
}
