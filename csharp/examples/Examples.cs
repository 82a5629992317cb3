// Runnable examples of the three device patterns of issue 18, in one program:
//
//   mono examples.exe pubsub   [tcp|ipc|inproc]   hardware events to subscribers with topic filters
//   mono examples.exe reqrep   [tcp|ipc|inproc]   "open serial port" / "play audio" requests to a device
//   mono examples.exe pushpull [tcp|ipc|inproc]   devices pushing log lines to a central collector
//   mono examples.exe all                         every pattern over every transport
//
// Each side runs on its own thread here so the example is self-contained; in a real system
// each would be its own process, with the same code. The receive loops use ReceiveBytes into
// one buffer, which allocates nothing per message.

using System;
using System.IO;
using System.Text;
using System.Threading;
using ZeroMQ;

static class Examples
{
    static int Main(string[] args)
    {
        string pattern = args.Length > 0 ? args[0] : "all";
        string[] transports = args.Length > 1 ? new[] { args[1] } : new[] { "tcp", "ipc", "inproc" };
        try
        {
            using (var ctx = new ZContext())
            {
                foreach (string t in transports)
                {
                    if (pattern == "pubsub" || pattern == "all") PubSub(ctx, t);
                    if (pattern == "reqrep" || pattern == "all") ReqRep(ctx, t);
                    if (pattern == "pushpull" || pattern == "all") PushPull(ctx, t);
                    if (pattern != "all" && pattern != "pubsub" && pattern != "reqrep" && pattern != "pushpull")
                    {
                        Console.Error.WriteLine("usage: examples.exe [pubsub|reqrep|pushpull|all] [tcp|ipc|inproc]");
                        return 2;
                    }
                }
            }
            return 0;
        }
        catch (ZException e)
        {
            Console.Error.WriteLine("ZeroMQ error: " + e.Message);
            return 1;
        }
        finally
        {
            foreach (string d in ipcDirs) Directory.Delete(d, true);
        }
    }

    static readonly System.Collections.Generic.List<string> ipcDirs = new System.Collections.Generic.List<string>();

    // A fresh endpoint: tcp on an ephemeral port, ipc in a temp dir, inproc by name.
    static string BindFresh(ZSocket s, string transport)
    {
        if (transport == "tcp") s.Bind("tcp://127.0.0.1:*");
        else if (transport == "ipc")
        {
            string dir = Path.Combine(Path.GetTempPath(), "oxmq-cs-example-" + Guid.NewGuid().ToString("N"));
            Directory.CreateDirectory(dir);
            ipcDirs.Add(dir);
            s.Bind("ipc://" + Path.Combine(dir, "sock"));
        }
        else s.Bind("inproc://example-" + Guid.NewGuid().ToString("N"));
        return s.LastEndpoint;
    }

    // ---- Pub/sub: a hardware service publishes events; a UI subscribes to buttons only.
    static void PubSub(ZContext ctx, string transport)
    {
        using (var hardware = new ZSocket(ctx, ZSocketType.PUB))
        using (var ui = new ZSocket(ctx, ZSocketType.SUB))
        {
            string ep = BindFresh(hardware, transport);
            ui.Subscribe("hw/button/");
            ui.Connect(ep);
            var topic = new byte[64];
            var payload = new byte[256];
            int received = 0;
            // A subscription takes a moment to reach the publisher: publish an event every
            // 10 ms until three have arrived (a real publisher publishes continuously anyway).
            DateTime deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            for (int seq = 0; received < 3; seq++)
            {
                if (DateTime.UtcNow > deadline) throw new TimeoutException("no event arrived within 30 s");
                Publish(hardware, "hw/temperature/cpu", "41.5 C");
                Publish(hardware, "hw/button/" + (seq % 2 == 0 ? "power" : "reset"), "pressed #" + seq);
                while (received < 3 && ui.PollIn(TimeSpan.FromMilliseconds(10)))
                {
                    int t = ui.ReceiveBytes(topic, 0, topic.Length);
                    int p = ui.ReceiveBytes(payload, 0, payload.Length);
                    Console.WriteLine("[pubsub/" + transport + "] ui got " + Encoding.UTF8.GetString(topic, 0, t) + ": " + Encoding.UTF8.GetString(payload, 0, p));
                    received++;
                }
            }
        }
    }

    static void Publish(ZSocket pub, string topic, string payload)
    {
        byte[] t = Encoding.UTF8.GetBytes(topic), p = Encoding.UTF8.GetBytes(payload);
        pub.SendBytes(t, 0, t.Length, ZSocketFlags.More);
        pub.SendBytes(p, 0, p.Length, ZSocketFlags.None);
    }

    // ---- Req/rep: a device service answers commands.
    static void ReqRep(ZContext ctx, string transport)
    {
        using (var device = new ZSocket(ctx, ZSocketType.REP))
        {
            string ep = BindFresh(device, transport);
            var server = new Thread(() =>
            {
                var buf = new byte[256];
                while (true)
                {
                    int n = device.ReceiveBytes(buf, 0, buf.Length);
                    string cmd = Encoding.UTF8.GetString(buf, 0, Math.Min(n, buf.Length));
                    if (cmd == "shutdown") { device.SendString("bye"); return; }
                    if (cmd.StartsWith("open serial port ")) device.SendString("ok: " + cmd.Substring(17) + " is open");
                    else if (cmd.StartsWith("play audio ")) device.SendString("ok: playing " + cmd.Substring(11));
                    else device.SendString("error: unknown command");
                }
            });
            server.Start();
            using (var client = new ZSocket(ctx, ZSocketType.REQ))
            {
                client.ReceiveTimeout = TimeSpan.FromSeconds(10);
                client.Connect(ep);
                foreach (string cmd in new[] { "open serial port /dev/ttyUSB0", "play audio doorbell.wav", "shutdown" })
                {
                    client.SendString(cmd);
                    Console.WriteLine("[reqrep/" + transport + "] " + cmd + " -> " + client.ReceiveString());
                }
            }
            server.Join();
        }
    }

    // ---- Push/pull: devices push log lines to one collector.
    static void PushPull(ZContext ctx, string transport)
    {
        const int devices = 3, lines = 100;
        using (var collector = new ZSocket(ctx, ZSocketType.PULL))
        {
            string ep = BindFresh(collector, transport);
            collector.ReceiveTimeout = TimeSpan.FromSeconds(10);
            var senders = new Thread[devices];
            var collected = new ManualResetEventSlim();
            for (int d = 0; d < devices; d++)
            {
                int dev = d;
                senders[d] = new Thread(() =>
                {
                    using (var log = new ZSocket(ctx, ZSocketType.PUSH))
                    {
                        log.Connect(ep);
                        for (int i = 0; i < lines; i++) log.SendString("device-" + dev + " INFO heartbeat " + i);
                        collected.Wait(TimeSpan.FromSeconds(10)); // a log source stays connected
                    }
                });
                senders[d].Start();
            }
            var buf = new byte[256];
            int total = 0;
            for (; total < devices * lines; total++) collector.ReceiveBytes(buf, 0, buf.Length);
            collected.Set();
            foreach (var s in senders) s.Join();
            Console.WriteLine("[pushpull/" + transport + "] collector got " + total + " log lines from " + devices + " devices");
        }
    }
}
