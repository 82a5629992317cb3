package guide;

import org.zeromq.ZMQ;

/** Task sink (the guide's tasksink): waits for the start of the batch, then collects results. */
public class TaskSink {
    /** Returns the sum of the workloads reported in {@code tasks} results. */
    public static int run(ZMQ.Socket receiver, int tasks) {
        String start = receiver.recvStr(0);
        if (!"0".equals(start)) throw new IllegalStateException("expected the batch start, got " + start);
        int sum = 0;
        for (int taskNbr = 0; taskNbr < tasks; taskNbr++) {
            String result = receiver.recvStr(0).trim();
            sum += Integer.parseInt(result.substring("done ".length()));
        }
        return sum;
    }
}
