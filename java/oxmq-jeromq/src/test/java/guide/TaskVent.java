package guide;

import java.util.Random;

import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Task ventilator (the guide's taskvent): a batch of tasks to the workers, the start to the sink. */
public class TaskVent {
    /** Sends {@code tasks} tasks on the bound {@code sender} socket; returns the total workload. */
    public static int run(ZMQ.Socket sender, ZMQ.Socket sink, int tasks) {
        sink.send("0", 0);
        Random srandom = new Random(42);
        int totalMsec = 0;
        for (int taskNbr = 0; taskNbr < tasks; taskNbr++) {
            int workload = srandom.nextInt(5) + 1;
            totalMsec += workload;
            sender.send(String.format("%d", workload), 0);
        }
        return totalMsec;
    }
}
