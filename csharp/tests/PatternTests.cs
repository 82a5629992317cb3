// The three device patterns of issue 18, over tcp, ipc and inproc: hardware events published
// to subscribers with topic filters, requests to devices ("open serial port", "play audio"),
// and logs pushed to a central collector.

using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class PatternTests
    {
        // Receives a two-frame event (topic, payload) into reusable buffers; null on timeout.
        static string ReceiveEvent(ZSocket sub, byte[] topic, byte[] payload, TimeSpan timeout)
        {
            if (!sub.PollIn(timeout)) return null;
            int t = sub.ReceiveBytes(topic, 0, topic.Length);
            Assert.True(sub.ReceiveMore, "an event has a payload frame");
            int p = sub.ReceiveBytes(payload, 0, payload.Length);
            Assert.True(!sub.ReceiveMore, "an event has two frames");
            return Util.Text(topic, t) + " " + Util.Text(payload, p);
        }

        static void Publish(ZSocket pub, string topic, string payload)
        {
            byte[] t = Util.Bytes(topic), p = Util.Bytes(payload);
            pub.SendBytes(t, 0, t.Length, ZSocketFlags.More);
            pub.SendBytes(p, 0, p.Length, ZSocketFlags.None);
        }

        // Publishes "<topic> sync" for each subscriber's sync topic until every subscriber has
        // seen its own: then their subscriptions are in place (no sleeping on the slow joiner).
        static void Sync(ZSocket pub, ZSocket[] subs, string[] syncTopics)
        {
            var seen = new bool[subs.Length];
            var deadline = DateTime.UtcNow + Util.Deadline;
            byte[] tb = new byte[64], pb = new byte[64];
            while (!seen.All(x => x))
            {
                Assert.True(DateTime.UtcNow < deadline, "subscriptions did not arrive at the publisher");
                foreach (string st in syncTopics) Publish(pub, st, "sync");
                for (int i = 0; i < subs.Length; i++)
                {
                    string ev;
                    while ((ev = ReceiveEvent(subs[i], tb, pb, TimeSpan.FromMilliseconds(seen[i] ? 0 : 10))) != null)
                    {
                        if (ev == syncTopics[i] + " sync") seen[i] = true;
                    }
                }
            }
        }

        // Everything a subscriber receives up to and including its end marker, syncs dropped.
        static List<string> Collect(ZSocket sub, string endMarker, string what)
        {
            var got = new List<string>();
            byte[] tb = new byte[64], pb = new byte[64];
            while (true)
            {
                string ev = ReceiveEvent(sub, tb, pb, Util.Deadline);
                Assert.True(ev != null, what + " timed out; so far: " + string.Join(", ", got));
                if (ev.EndsWith(" sync")) continue;
                got.Add(ev);
                if (ev == endMarker) return got;
            }
        }

        [Test]
        static void PubSubHardwareEvents(string transport)
        {
            using (var ctx = new ZContext())
            using (var pub = new ZSocket(ctx, ZSocketType.PUB))
            using (var buttons = new ZSocket(ctx, ZSocketType.SUB))
            using (var allHw = new ZSocket(ctx, ZSocketType.SUB))
            using (var audio = new ZSocket(ctx, ZSocketType.SUB))
            {
                string ep = Util.BindFresh(pub, transport);
                buttons.Subscribe("hw/button");
                allHw.Subscribe("hw/");
                audio.Subscribe("audio/");
                foreach (var s in new[] { buttons, allHw, audio }) s.Connect(ep);
                var subs = new[] { buttons, allHw, audio };
                Sync(pub, subs, new[] { "hw/button/0", "hw/x", "audio/x" });

                Publish(pub, "hw/button/1", "pressed");
                Publish(pub, "hw/temp/1", "23.5");
                Publish(pub, "audio/volume", "3");
                Publish(pub, "net/link", "up");     // nobody subscribed
                Publish(pub, "hw/button/end", "."); // end marker of the hardware subscribers
                Publish(pub, "audio/end", ".");

                Assert.SequenceEqual(new[] { "hw/button/1 pressed", "hw/button/end ." }, Collect(buttons, "hw/button/end .", "button subscriber"), "button subscriber");
                Assert.SequenceEqual(new[] { "hw/button/1 pressed", "hw/temp/1 23.5", "hw/button/end ." }, Collect(allHw, "hw/button/end .", "hardware subscriber"), "hardware subscriber");
                Assert.SequenceEqual(new[] { "audio/volume 3", "audio/end ." }, Collect(audio, "audio/end .", "audio subscriber"), "audio subscriber");

                // Narrow a subscription: drop "hw/", keep only temperatures. A sync topic under
                // "hw/temp" would also match the old "hw/", so it could arrive before the change
                // reaches the publisher; a topic of its own, subscribed last, arrives only after
                // the publisher has applied the two changes before it (one connection, in order).
                allHw.Unsubscribe("hw/");
                allHw.Subscribe("hw/temp");
                allHw.Subscribe("sync/narrowed");
                Sync(pub, new[] { allHw }, new[] { "sync/narrowed" });
                Publish(pub, "hw/button/2", "pressed");
                Publish(pub, "hw/temp/2", "24.0");
                Publish(pub, "hw/temp/end", ".");
                Assert.SequenceEqual(new[] { "hw/temp/2 24.0", "hw/temp/end ." }, Collect(allHw, "hw/temp/end .", "after unsubscribe"), "after unsubscribe");
            }
        }

        // The device side of the request/reply pattern: one command per request.
        internal static string DeviceReply(string request)
        {
            string[] w = request.Split(' ');
            if (request.StartsWith("open serial port ") && w.Length == 5)
                return "ok serial " + w[3] + " opened at " + w[4] + " baud";
            if (request.StartsWith("play audio ") && w.Length == 3)
                return "ok playing " + w[2];
            return "error unknown command: " + request;
        }

        [Test]
        static void ReqRepDeviceCommands(string transport)
        {
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            {
                string ep = Util.BindFresh(rep, transport);
                rep.ReceiveTimeout = Util.Deadline;
                var server = Util.Spawn(() =>
                {
                    var buf = new byte[256];
                    while (true)
                    {
                        int n = rep.ReceiveBytes(buf, 0, buf.Length);
                        string req = Util.Text(buf, n);
                        if (req == "quit") { rep.SendString("bye"); return; }
                        rep.SendString(DeviceReply(req));
                    }
                });
                using (var req = new ZSocket(ctx, ZSocketType.REQ))
                {
                    req.ReceiveTimeout = Util.Deadline;
                    req.Connect(ep);
                    var cases = new[]
                    {
                        "open serial port /dev/ttyUSB0 115200", "ok serial /dev/ttyUSB0 opened at 115200 baud",
                        "play audio chime.wav", "ok playing chime.wav",
                        "reboot", "error unknown command: reboot",
                    };
                    var reply = new byte[256];
                    for (int i = 0; i < cases.Length; i += 2)
                    {
                        req.SendString(cases[i]);
                        int n = req.ReceiveBytes(reply, 0, reply.Length);
                        Assert.Equal(cases[i + 1], Util.Text(reply, n), "reply to " + cases[i]);
                    }
                    req.SendString("quit");
                    Assert.Equal("bye", req.ReceiveString(), "reply to quit");
                }
                server();
            }
        }

        [Test]
        static void PushPullLogCollector(string transport)
        {
            const int devices = 3, lines = 2000;
            using (var ctx = new ZContext())
            using (var collector = new ZSocket(ctx, ZSocketType.PULL))
            {
                string ep = Util.BindFresh(collector, transport);
                collector.ReceiveTimeout = Util.Deadline;
                var done = new ManualResetEventSlim();
                var joins = new List<Func<bool>>();
                for (int d = 0; d < devices; d++)
                {
                    int dev = d;
                    joins.Add(Util.Spawn(() =>
                    {
                        using (var push = new ZSocket(ctx, ZSocketType.PUSH))
                        {
                            push.Connect(ep);
                            for (int i = 0; i < lines; i++)
                                push.SendString("device-" + dev + " " + i + " INFO temperature nominal");
                            // Stay connected until collected: a log source is long-lived, and
                            // libzmq 4.3.4 may drop ipc messages of a PUSH closed at once (#4660).
                            done.Wait(Util.Deadline);
                        }
                    }));
                }
                var next = new int[devices];
                var buf = new byte[128];
                for (int k = 0; k < devices * lines; k++)
                {
                    int n = collector.ReceiveBytes(buf, 0, buf.Length);
                    string[] w = Util.Text(buf, n).Split(' ');
                    int dev = int.Parse(w[0].Substring("device-".Length));
                    Assert.Equal(next[dev], int.Parse(w[1]), "sequence of device " + dev);
                    next[dev]++;
                }
                done.Set();
                foreach (var j in joins) j();
                Assert.SequenceEqual(Enumerable.Repeat(lines, devices), next, "lines per device");
                int extra;
                Assert.True(!collector.TryReceiveBytes(buf, 0, buf.Length, out extra), "no extra lines");
            }
        }
    }
}
