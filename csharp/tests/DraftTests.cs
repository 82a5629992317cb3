// The draft socket types (issue 44): routing ids, groups, PEER's connect, the thread-safe
// types used from several threads, polling; and against JeroMQ 0.6.0's draft types.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class DraftTests
    {
        static ZSocket Sock(ZContext ctx, ZSocketType t)
        {
            var s = new ZSocket(ctx, t);
            s.Linger = TimeSpan.Zero;
            s.ReceiveTimeout = TimeSpan.FromSeconds(10);
            s.SendTimeout = TimeSpan.FromSeconds(10);
            return s;
        }

        static ZFrame Frame(string text, uint routingId = 0, string group = null)
        {
            var f = new ZFrame(text);
            if (routingId != 0) f.RoutingId = routingId;
            if (group != null) f.Group = group;
            return f;
        }

        static int Errno(Action a)
        {
            try { a(); }
            catch (ZException e) { return e.Error.Number; }
            throw new AssertionException("expected a ZException");
        }

        [Test]
        static void ServerClientRoutingIds(string transport)
        {
            using (var ctx = new ZContext())
            using (var srv = Sock(ctx, ZSocketType.SERVER))
            using (var a = Sock(ctx, ZSocketType.CLIENT))
            using (var b = Sock(ctx, ZSocketType.CLIENT))
            {
                string ep = Util.BindFresh(srv, transport);
                a.Connect(ep);
                b.Connect(ep);
                a.SendString("from a");
                uint ida, idb;
                using (ZFrame f = srv.ReceiveFrame()) { Assert.Equal("from a", f.ReadString(), "a"); ida = f.RoutingId; }
                b.SendString("from b");
                using (ZFrame f = srv.ReceiveFrame()) idb = f.RoutingId;
                Assert.True(ida != 0 && ida != idb, "distinct routing ids");
                srv.SendFrame(Frame("to b", idb));
                Assert.Equal("to b", b.ReceiveString(), "routed");
                Assert.Equal(113, Errno(() => srv.SendFrame(Frame("nobody", ida + idb + 7))), "EHOSTUNREACH");
                using (var f = new ZFrame("x")) Assert.Equal(22, Errno(() => f.RoutingId = 0), "EINVAL");
                Assert.Equal(22, Errno(() => a.SendFrame(new ZFrame("x"), ZSocketFlags.More)), "single-part only");
            }
        }

        [Test]
        static void RadioDishGroups(string transport)
        {
            using (var ctx = new ZContext())
            using (var dish = Sock(ctx, ZSocketType.DISH))
            using (var radio = Sock(ctx, ZSocketType.RADIO))
            {
                radio.Connect(Util.BindFresh(dish, transport));
                dish.Join("weather");
                dish.Join("sports");
                Assert.Equal(22, Errno(() => dish.Join("weather")), "joined twice");
                Assert.Equal(22, Errno(() => dish.Join(new string('x', 256))), "group too long");
                AwaitJoin(radio, dish, "weather");
                radio.SendFrame(Frame("never", group: "politics"));
                radio.SendFrame(Frame("goal", group: "sports"));
                radio.SendFrame(Frame("rain", group: "weather"));
                using (ZFrame f = dish.ReceiveFrame()) Assert.Equal("sports/goal", f.Group + "/" + f.ReadString(), "first");
                using (ZFrame f = dish.ReceiveFrame()) Assert.Equal("weather/rain", f.Group + "/" + f.ReadString(), "second");
                dish.Leave("sports");
                Assert.Equal(22, Errno(() => dish.Leave("sports")), "left twice");
                using (var srv = Sock(ctx, ZSocketType.SERVER))
                    Assert.Equal(95, Errno(() => srv.Join("g")), "ENOTSUP");
            }
        }

        /// <summary>Publishes probes to <paramref name="group"/> until the dish has one: its JOIN reached the radio.</summary>
        static void AwaitJoin(ZSocket radio, ZSocket dish, string group)
        {
            var sw = Stopwatch.StartNew();
            var poll = new[] { ZPollItem.CreateReceiver(dish) };
            while (true)
            {
                radio.SendFrame(Frame("probe", group: group));
                if (ZPolling.Poll(poll, TimeSpan.FromMilliseconds(20)) > 0) break;
                Assert.True(sw.Elapsed < Util.Deadline, "the JOIN never reached the radio");
            }
            while (ZPolling.Poll(poll, TimeSpan.Zero) > 0) dish.ReceiveFrame().Dispose();
        }

        [Test]
        static void ScatterGatherChannelPeer(string transport)
        {
            using (var ctx = new ZContext())
            using (var g = Sock(ctx, ZSocketType.GATHER))
            using (var s = Sock(ctx, ZSocketType.SCATTER))
            using (var c1 = Sock(ctx, ZSocketType.CHANNEL))
            using (var c2 = Sock(ctx, ZSocketType.CHANNEL))
            using (var p1 = Sock(ctx, ZSocketType.PEER))
            using (var p2 = Sock(ctx, ZSocketType.PEER))
            {
                s.Connect(Util.BindFresh(g, transport));
                for (int i = 0; i < 10; i++) s.SendString("s" + i);
                for (int i = 0; i < 10; i++) Assert.Equal("s" + i, g.ReceiveString(), "gathered");
                c2.Connect(Util.BindFresh(c1, transport));
                c2.SendString("ping");
                Assert.Equal("ping", c1.ReceiveString(), "channel");
                uint id = p2.ConnectPeer(Util.BindFresh(p1, transport));
                Assert.True(id != 0, "a routing id");
                p2.SendFrame(Frame("first", id));
                uint back;
                using (ZFrame f = p1.ReceiveFrame()) { Assert.Equal("first", f.ReadString(), "peer"); back = f.RoutingId; }
                p1.SendFrame(Frame("back", back));
                using (ZFrame f = p2.ReceiveFrame()) Assert.Equal(id + ":back", f.RoutingId + ":" + f.ReadString(), "reply");
            }
        }

        /// <summary>As in libzmq: four threads send on one CLIENT while one receives on the SERVER
        /// and another sends on it.</summary>
        [Test(TimeoutSeconds = 60)]
        static void ThreadSafeTypesAcrossThreads()
        {
            using (var ctx = new ZContext())
            using (var srv = Sock(ctx, ZSocketType.SERVER))
            using (var cli = Sock(ctx, ZSocketType.CLIENT))
            {
                cli.Connect(Util.BindFresh(srv, "tcp"));
                cli.SendString("hi");
                uint id;
                using (ZFrame f = srv.ReceiveFrame()) id = f.RoutingId;
                var got = new List<string>();
                var receiver = Util.Spawn(() => { for (int i = 0; i < 400; i++) got.Add(srv.ReceiveString()); });
                var senders = Enumerable.Range(0, 4).Select(k => Util.Spawn(() => { for (int i = 0; i < 100; i++) cli.SendString(k + ":" + i); })).ToList();
                var down = Util.Spawn(() => { for (int i = 0; i < 50; i++) srv.SendFrame(Frame("down " + i, id)); });
                foreach (var s in senders) s();
                down();
                receiver();
                var want = Enumerable.Range(0, 4).SelectMany(k => Enumerable.Range(0, 100).Select(i => k + ":" + i)).OrderBy(x => x, StringComparer.Ordinal);
                Assert.SequenceEqual(want.ToArray(), got.OrderBy(x => x, StringComparer.Ordinal).ToArray(), "every message once");
                for (int i = 0; i < 50; i++) Assert.Equal("down " + i, cli.ReceiveString(), "replies in order");
            }
        }

        [Test]
        static void PollDraftSockets()
        {
            using (var ctx = new ZContext())
            using (var srv = Sock(ctx, ZSocketType.SERVER))
            using (var cli = Sock(ctx, ZSocketType.CLIENT))
            using (var dish = Sock(ctx, ZSocketType.DISH))
            using (var radio = Sock(ctx, ZSocketType.RADIO))
            {
                cli.Connect(Util.BindFresh(srv, "tcp"));
                radio.Connect(Util.BindFresh(dish, "tcp"));
                dish.Join("g");
                var items = new[] { ZPollItem.CreateReceiver(srv), ZPollItem.CreateReceiver(dish) };
                Assert.Equal(0, ZPolling.Poll(items, TimeSpan.Zero), "nothing yet");
                cli.SendString("c");
                Assert.Equal(1, ZPolling.Poll(items, Util.Deadline), "the server");
                Assert.True(items[0].CanReceive && !items[1].CanReceive, "which");
                Assert.Equal("c", srv.ReceiveString(), "c");
                AwaitJoin(radio, dish, "g");
                radio.SendFrame(Frame("r", group: "g"));
                Assert.Equal(1, ZPolling.Poll(items, Util.Deadline), "the dish");
                Assert.True(items[1].CanReceive, "dish readable");
            }
        }

        // ------------------------------------------------------------------ against JeroMQ

        static readonly string Jar = Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile),
            ".m2/repository/org/zeromq/jeromq/0.6.0/jeromq-0.6.0.jar");
        static string peerClasses;

        /// <summary>interop/peers/DraftPeer.java compiled against JeroMQ 0.6.0, or null (and why) when
        /// java, javac or the jar are missing (test-all.sh installs them; this suite alone does not).</summary>
        static string PeerClasses(out string why)
        {
            why = null;
            if (peerClasses != null) return peerClasses;
            string src = Path.GetFullPath(Path.Combine(AppDomain.CurrentDomain.BaseDirectory, "../../interop/peers/DraftPeer.java"));
            if (!File.Exists(Jar)) { why = Jar + " is missing"; return null; }
            if (!File.Exists(src)) { why = src + " is missing"; return null; }
            string outDir = Path.Combine(Path.GetTempPath(), "oxmq-cs-draftpeer-" + Process.GetCurrentProcess().Id);
            Directory.CreateDirectory(outDir);
            try
            {
                var p = Process.Start(new ProcessStartInfo("javac", "-cp \"" + Jar + "\" -d \"" + outDir + "\" \"" + src + "\"") { UseShellExecute = false, RedirectStandardError = true });
                string err = p.StandardError.ReadToEnd();
                p.WaitForExit();
                if (p.ExitCode != 0) { why = "javac failed: " + err; return null; }
            }
            catch (System.ComponentModel.Win32Exception) { why = "no javac"; return null; }
            return peerClasses = outDir;
        }

        sealed class JPeer : IDisposable
        {
            readonly Process p;
            public readonly string Endpoint;
            public JPeer(string classes, string scenario, string mode, string ep)
            {
                p = Process.Start(new ProcessStartInfo("java", "-cp \"" + classes + ":" + Jar + "\" DraftPeer " + scenario + " " + mode + " " + ep)
                { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardInput = true });
                string ready = Line();
                Assert.True(ready.StartsWith("READY "), "JeroMQ peer: " + ready);
                Endpoint = ready.Substring(6);
            }
            public string Line()
            {
                var t = p.StandardOutput.ReadLineAsync();
                Assert.True(t.Wait(TimeSpan.FromSeconds(30)), "the JeroMQ peer is silent");
                Assert.True(t.Result != null, "the JeroMQ peer exited");
                return t.Result;
            }
            public void Dispose() { try { p.Kill(); } catch (InvalidOperationException) { } p.WaitForExit(5000); }
        }

        [Test(TimeoutSeconds = 120)]
        static void AgainstJeroMQ()
        {
            string why;
            string classes = PeerClasses(out why);
            if (classes == null) { Console.WriteLine("  skipped: " + why); return; }
            using (var ctx = new ZContext())
            {
                // A JeroMQ CLIENT against our SERVER (routing ids assigned here).
                using (var srv = Sock(ctx, ZSocketType.SERVER))
                {
                    srv.Bind("tcp://127.0.0.1:*");
                    using (var j = new JPeer(classes, "client", "connect", srv.LastEndpoint))
                    {
                        for (int i = 0; i < 10; i++)
                        {
                            using (ZFrame f = srv.ReceiveFrame())
                            {
                                Assert.Equal("c" + i, f.ReadString(), "request");
                                srv.SendFrame(Frame("echo:c" + i, f.RoutingId));
                            }
                        }
                        Assert.Equal("OK", j.Line(), "JeroMQ client");
                    }
                }
                // Our CLIENT against a JeroMQ SERVER.
                using (var j = new JPeer(classes, "server", "bind", "tcp://127.0.0.1:*"))
                using (var c = Sock(ctx, ZSocketType.CLIENT))
                {
                    c.Connect(j.Endpoint);
                    for (int i = 0; i < 10; i++)
                    {
                        c.SendString("c" + i);
                        Assert.Equal("echo:c" + i, c.ReceiveString(), "reply");
                    }
                    Assert.Equal("OK", j.Line(), "JeroMQ server");
                }
                // A JeroMQ RADIO (g1 and g2) to our DISH joined to g1.
                using (var dish = Sock(ctx, ZSocketType.DISH))
                {
                    dish.Join("g1");
                    dish.Bind("tcp://127.0.0.1:*");
                    using (new JPeer(classes, "radio", "connect", dish.LastEndpoint))
                        for (int i = 0; i < 20; i++)
                            using (ZFrame f = dish.ReceiveFrame())
                                Assert.True(f.Group == "g1" && f.ReadString().StartsWith("tick"), "g1 only: " + f.Group);
                }
                // Our RADIO to a JeroMQ DISH joined to g1.
                using (var j = new JPeer(classes, "dish", "bind", "tcp://127.0.0.1:*"))
                using (var radio = Sock(ctx, ZSocketType.RADIO))
                {
                    radio.Connect(j.Endpoint);
                    var sw = Stopwatch.StartNew();
                    string first = null;
                    var reader = System.Threading.Tasks.Task.Run(() => j.Line());
                    while (!reader.Wait(20))
                    {
                        radio.SendFrame(Frame("probe", group: "g1"));
                        radio.SendFrame(Frame("never", group: "g2"));
                        Assert.True(sw.Elapsed < Util.Deadline, "the JOIN never reached the radio");
                    }
                    first = reader.Result;
                    Assert.Equal("RECV g1 probe", first, "g1 only");
                    radio.SendFrame(Frame("end", group: "g1"));
                    string l;
                    while ((l = j.Line()) != "OK") Assert.True(l.StartsWith("RECV g1 "), "g1 only: " + l);
                }
            }
        }
    }
}
