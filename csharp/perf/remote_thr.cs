// remote_thr <connect-to> <message-size> <message-count> [<enable_curve>]
// Connects a PUSH socket and sends <message-count> messages of <message-size> bytes from one
// buffer, then waits (linger) until they are all delivered. Prints the sender's process CPU and
// managed bytes per message (extra lines; libzmq's tool prints nothing).

using System;
using ZeroMQ;

static class RemoteThr
{
    static int Main(string[] args)
    {
        PerfUtil.Usage("remote_thr", args, "message-count");
        string connectTo = args[0];
        int size = PerfUtil.Count(args[1], "message-size");
        int count = PerfUtil.Count(args[2], "message-count");
        long cpu, alloc;
        using (var ctx = new ZContext())
        {
            using (var s = new ZSocket(ctx, ZSocketType.PUSH))
            {
                if (PerfUtil.Curve(args)) PerfUtil.CurveSetup(s, false);
                s.Connect(connectTo);
                var buf = new byte[size];
                long cpu0 = PerfUtil.ProcessCpuNs();
                long alloc0 = GC.GetAllocatedBytesForCurrentThread();
                for (int i = 0; i < count; i++) s.SendBytes(buf, 0, size, ZSocketFlags.None);
                alloc = GC.GetAllocatedBytesForCurrentThread() - alloc0;
                cpu = PerfUtil.ProcessCpuNs() - cpu0;
            }
        } // the context's termination waits until everything is delivered
        Console.WriteLine("sender " + "cpu per message: " + ((double)cpu / Math.Max(count, 1)).ToString("F1", System.Globalization.CultureInfo.InvariantCulture) + " [ns]");
        Console.WriteLine("sender allocated per message: " + ((double)alloc / Math.Max(count, 1)).ToString("F3", System.Globalization.CultureInfo.InvariantCulture) + " [B]");
        return 0;
    }
}
