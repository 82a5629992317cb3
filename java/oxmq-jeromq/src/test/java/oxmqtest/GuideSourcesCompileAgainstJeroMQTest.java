package oxmqtest;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;

/** The guide programs this module's tests run are plain JeroMQ programs: the same sources
 *  compile against JeroMQ 0.6.0's jar (Maven compiles them against oxmq-jeromq). */
class GuideSourcesCompileAgainstJeroMQTest {
    @Test
    void guideSourcesCompileUnchangedAgainstJeroMQ() throws Exception {
        Path classes = JeroMQ.guideClasses();
        assertNotNull(classes, JeroMQ.diagnostics());
        for (String c : new String[] {"HwServer", "HwClient", "PsEnvPub", "PsEnvSub", "TaskVent", "TaskWork",
                "TaskSink", "RrBroker", "CurveServer", "SecurePeer", "Run"}) {
            assertTrue(Files.exists(classes.resolve("guide/" + c + ".class")), c);
        }
    }
}
