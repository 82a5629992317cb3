// Shared bits of the C# perf tools: argument parsing, the output lines of libzmq's perf tools
// (the harness parses these), process CPU time, and the CURVE switch with the fixed test keys
// of perf/c/perf_curve.h (so a C# side and a C side can be paired).

using System;
using System.Runtime.InteropServices;
using ZeroMQ;

static class PerfUtil
{
    public const string ServerPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
    public const string ServerSecret = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
    public const string ClientPublic = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
    public const string ClientSecret = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

    public static void Usage(string tool, string[] args, string third)
    {
        if (args.Length != 3 && args.Length != 4)
        {
            Console.WriteLine("usage: " + tool + " <" + (tool.StartsWith("local") ? "bind-to" : "connect-to") + "> <message-size> <" + third + "> [<enable_curve>]");
            Environment.Exit(1);
        }
    }

    public static int Count(string s, string name)
    {
        int v;
        if (!int.TryParse(s, out v) || v < 0) Die("arguments", name);
        return v;
    }

    public static bool Curve(string[] args) { return args.Length == 4 && Count(args[3], "enable_curve") != 0; }

    public static void CurveSetup(ZSocket s, bool server)
    {
        var ascii = System.Text.Encoding.ASCII;
        if (server)
        {
            s.CurveServer = true;
            s.CurveSecretKey = ascii.GetBytes(ServerSecret);
        }
        else
        {
            s.CurveServerKey = ascii.GetBytes(ServerPublic);
            s.CurvePublicKey = ascii.GetBytes(ClientPublic);
            s.CurveSecretKey = ascii.GetBytes(ClientSecret);
        }
    }

    public static void Die(string what, string detail)
    {
        Console.Error.WriteLine("error in " + what + ": " + detail);
        Environment.Exit(1);
    }

    [StructLayout(LayoutKind.Sequential)]
    struct Timespec { public long Sec; public long Nsec; }

    [DllImport("libc", EntryPoint = "clock_gettime")]
    static extern int clock_gettime(int clock, out Timespec ts);

    /// <summary>CPU time of the whole process (all threads, user + system), in nanoseconds.</summary>
    public static long ProcessCpuNs()
    {
        Timespec ts;
        clock_gettime(2 /* CLOCK_PROCESS_CPUTIME_ID */, out ts);
        return ts.Sec * 1000000000L + ts.Nsec;
    }

    public static long MonotonicUs()
    {
        return System.Diagnostics.Stopwatch.GetTimestamp() / (System.Diagnostics.Stopwatch.Frequency / 1000000);
    }

    public static void PrintThroughput(long size, long count, double elapsedUs)
    {
        if (elapsedUs <= 0) elapsedUs = 1;
        double throughput = count / (elapsedUs / 1e6);
        double megabits = throughput * size * 8 / 1e6;
        Console.WriteLine("message size: " + size + " [B]");
        Console.WriteLine("message count: " + count);
        Console.WriteLine("mean throughput: " + (long)throughput + " [msg/s]");
        Console.WriteLine("mean throughput: " + megabits.ToString("F3", System.Globalization.CultureInfo.InvariantCulture) + " [Mb/s]");
    }

    public static void PrintLatency(long size, long roundtrips, double elapsedUs)
    {
        Console.WriteLine("message size: " + size + " [B]");
        Console.WriteLine("roundtrip count: " + roundtrips);
        Console.WriteLine("average latency: " + (elapsedUs / (2.0 * roundtrips)).ToString("F3", System.Globalization.CultureInfo.InvariantCulture) + " [us]");
    }

    /// <summary>The extra lines of the C# tools (after libzmq's): process CPU and managed bytes per message.</summary>
    public static void PrintCost(long cpuNs, long allocBytes, long count)
    {
        var inv = System.Globalization.CultureInfo.InvariantCulture;
        Console.WriteLine("cpu per message: " + ((double)cpuNs / count).ToString("F1", inv) + " [ns]");
        Console.WriteLine("allocated per message: " + ((double)allocBytes / count).ToString("F3", inv) + " [B]");
    }
}
