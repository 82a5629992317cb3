// Shared helpers of the tests: fresh endpoints per transport, deadlines, a temp directory.

using System;
using System.Diagnostics;
using System.IO;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class Util
    {
        static int seq;
        static readonly string tmp = Path.Combine(Path.GetTempPath(), "oxmq-cs-" + Process.GetCurrentProcess().Id + "-" + Guid.NewGuid().ToString("N").Substring(0, 8));

        /// <summary>Binds <paramref name="s"/> to a fresh endpoint of <paramref name="transport"/>
        /// (tcp: an ephemeral port) and returns the endpoint to connect to.</summary>
        public static string BindFresh(ZSocket s, string transport)
        {
            int n = Interlocked.Increment(ref seq);
            switch (transport)
            {
                case "tcp":
                    s.Bind("tcp://127.0.0.1:*");
                    return s.LastEndpoint;
                case "ipc":
                    Directory.CreateDirectory(tmp);
                    string ep = "ipc://" + Path.Combine(tmp, "s" + n);
                    s.Bind(ep);
                    return ep;
                case "inproc":
                    string name = "inproc://test-" + n + "-" + Guid.NewGuid().ToString("N");
                    s.Bind(name);
                    return name;
                default:
                    throw new ArgumentException("transport " + transport);
            }
        }

        public static readonly TimeSpan Deadline = TimeSpan.FromSeconds(15);

        /// <summary>Runs <paramref name="body"/> on a thread; the returned join waits with a deadline
        /// and rethrows what the thread threw.</summary>
        public static Func<bool> Spawn(Action body)
        {
            Exception error = null;
            var t = new Thread(() =>
            {
                try { body(); }
                catch (Exception e) { error = e; }
            });
            t.IsBackground = true;
            t.Start();
            return () =>
            {
                if (!t.Join(Deadline)) throw new AssertionException("a helper thread did not finish within " + Deadline);
                if (error != null) throw new AssertionException("helper thread failed: " + error);
                return true;
            };
        }

        public static string Text(byte[] b, int n) { return System.Text.Encoding.UTF8.GetString(b, 0, n); }

        public static byte[] Bytes(string s) { return System.Text.Encoding.UTF8.GetBytes(s); }

        public static void Cleanup()
        {
            try { if (Directory.Exists(tmp)) Directory.Delete(tmp, true); } catch (IOException) { }
        }
    }
}
