// local_lat <bind-to> <message-size> <roundtrip-count> [<enable_curve>]
// Binds a REP socket and echoes <roundtrip-count> messages through one buffer (libzmq's tool).

using System;
using ZeroMQ;

static class LocalLat
{
    static int Main(string[] args)
    {
        PerfUtil.Usage("local_lat", args, "roundtrip-count");
        string bindTo = args[0];
        int size = PerfUtil.Count(args[1], "message-size");
        int roundtrips = PerfUtil.Count(args[2], "roundtrip-count");
        using (var ctx = new ZContext())
        using (var s = new ZSocket(ctx, ZSocketType.REP))
        {
            if (PerfUtil.Curve(args)) PerfUtil.CurveSetup(s, true);
            s.Bind(bindTo);
            var buf = new byte[Math.Max(size, 1)];
            for (int i = 0; i < roundtrips; i++)
            {
                int n = s.ReceiveBytes(buf, 0, buf.Length);
                if (n != size) PerfUtil.Die("message", "wrong size");
                s.SendBytes(buf, 0, n, ZSocketFlags.None);
            }
        }
        return 0;
    }
}
