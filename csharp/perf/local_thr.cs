// local_thr <bind-to> <message-size> <message-count> [<enable_curve>]
// Binds a PULL socket, receives <message-count> messages and prints the throughput, timed from
// the first message to the last (libzmq's tool: same command line and output lines), then the
// process CPU time and the managed bytes allocated per message over the same span.
// OXMQ_CS_RECV=frame receives a ZFrame per message instead of into one buffer.

using System;
using ZeroMQ;

static class LocalThr
{
    static int Main(string[] args)
    {
        PerfUtil.Usage("local_thr", args, "message-count");
        string bindTo = args[0];
        int size = PerfUtil.Count(args[1], "message-size");
        int count = PerfUtil.Count(args[2], "message-count");
        bool frames = Environment.GetEnvironmentVariable("OXMQ_CS_RECV") == "frame";

        using (var ctx = new ZContext())
        using (var s = new ZSocket(ctx, ZSocketType.PULL))
        {
            if (PerfUtil.Curve(args)) PerfUtil.CurveSetup(s, true);
            s.Bind(bindTo);
            var buf = new byte[Math.Max(size, 1)];
            // The first message starts the clock (and compiles the receive path).
            if (Receive(s, buf, frames) != size) PerfUtil.Die("message", "wrong size");
            long cpu0 = PerfUtil.ProcessCpuNs();
            long alloc0 = GC.GetAllocatedBytesForCurrentThread();
            long t0 = PerfUtil.MonotonicUs();
            if (frames)
            {
                for (int i = 1; i < count; i++)
                {
                    using (ZFrame f = s.ReceiveFrame())
                        if (f.Length != size) PerfUtil.Die("message", "wrong size");
                }
            }
            else
            {
                for (int i = 1; i < count; i++)
                {
                    if (s.ReceiveBytes(buf, 0, buf.Length) != size) PerfUtil.Die("message", "wrong size");
                }
            }
            long elapsed = PerfUtil.MonotonicUs() - t0;
            long alloc = GC.GetAllocatedBytesForCurrentThread() - alloc0;
            long cpu = PerfUtil.ProcessCpuNs() - cpu0;
            PerfUtil.PrintThroughput(size, count, elapsed);
            PerfUtil.PrintCost(cpu, alloc, Math.Max(count - 1, 1));
        }
        return 0;
    }

    static int Receive(ZSocket s, byte[] buf, bool frames)
    {
        if (!frames) return s.ReceiveBytes(buf, 0, buf.Length);
        using (ZFrame f = s.ReceiveFrame()) return f.Length;
    }
}
