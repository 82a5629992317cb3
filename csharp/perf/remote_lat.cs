// remote_lat <connect-to> <message-size> <roundtrip-count> [<enable_curve>]
// Connects a REQ socket, does <roundtrip-count> request/reply round trips through one buffer
// and prints the one-way latency (elapsed / (2 * roundtrips)), as libzmq's tool does, then the
// process CPU per round trip.

using System;
using ZeroMQ;

static class RemoteLat
{
    static int Main(string[] args)
    {
        PerfUtil.Usage("remote_lat", args, "roundtrip-count");
        string connectTo = args[0];
        int size = PerfUtil.Count(args[1], "message-size");
        int roundtrips = PerfUtil.Count(args[2], "roundtrip-count");
        using (var ctx = new ZContext())
        using (var s = new ZSocket(ctx, ZSocketType.REQ))
        {
            if (PerfUtil.Curve(args)) PerfUtil.CurveSetup(s, false);
            s.Connect(connectTo);
            var buf = new byte[Math.Max(size, 1)];
            long cpu0 = PerfUtil.ProcessCpuNs();
            long alloc0 = GC.GetAllocatedBytesForCurrentThread();
            long t0 = PerfUtil.MonotonicUs();
            for (int i = 0; i < roundtrips; i++)
            {
                s.SendBytes(buf, 0, size, ZSocketFlags.None);
                if (s.ReceiveBytes(buf, 0, buf.Length) != size) PerfUtil.Die("message", "wrong size");
            }
            long elapsed = PerfUtil.MonotonicUs() - t0;
            long alloc = GC.GetAllocatedBytesForCurrentThread() - alloc0;
            long cpu = PerfUtil.ProcessCpuNs() - cpu0;
            PerfUtil.PrintLatency(size, roundtrips, elapsed);
            PerfUtil.PrintCost(cpu, alloc, Math.Max(roundtrips, 1));
        }
        return 0;
    }
}
