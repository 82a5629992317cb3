// The raw internal calls on Mono (src/FastCalls.cs): on where they should be, off when asked,
// and never in the way of a garbage collection (a thread inside a raw call cannot be
// suspended, so a receive that waits must not be one).

using System;
using System.Reflection;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class FastCallTests
    {
        static bool Enabled()
        {
            using (new ZContext()) { }
            FieldInfo f = typeof(ZContext).Assembly.GetType("ZeroMQ.FastCalls")
                .GetField("Enabled", BindingFlags.Static | BindingFlags.NonPublic);
            return (bool)f.GetValue(null);
        }

        [Test]
        static void OnUnderMonoUnlessTurnedOff()
        {
            bool mono = Type.GetType("Mono.Runtime") != null;
            bool off = Environment.GetEnvironmentVariable("OXMQ_CS_FASTCALLS") == "0";
            Assert.Equal(mono && !off, Enabled(), "raw calls registered (Mono " + mono + ", turned off " + off + ")");
        }

        // Full collections on a helper thread, each bounded in time: one that cannot suspend a
        // thread stuck in a raw call never finishes.
        static void CollectRepeatedly(int times)
        {
            Util.Spawn(() =>
            {
                for (int i = 0; i < times; i++)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
            })();
        }

        [Test]
        static void CollectionsRunWhileAReceiveWaits(string transport)
        {
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                string ep = Util.BindFresh(pull, transport);
                push.Connect(ep);
                var waiting = new ManualResetEventSlim();
                int got = -1;
                var receiver = Util.Spawn(() =>
                {
                    var buf = new byte[8];
                    waiting.Set();
                    got = pull.ReceiveBytes(buf, 0, buf.Length); // nothing queued: it waits
                });
                Assert.True(waiting.Wait(Util.Deadline), "receiver started");
                CollectRepeatedly(20);
                push.SendBytes(new byte[] { 1, 2, 3 }, 0, 3);
                receiver();
                Assert.Equal(3, got, "the waiting receive got the message sent after the collections");
            }
        }

        [Test]
        static void CollectionsRunWhileAThreadPollsWithoutWaiting(string transport)
        {
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                string ep = Util.BindFresh(pull, transport);
                push.Connect(ep);
                var polling = new ManualResetEventSlim();
                long tries = 0;
                int length = 0;
                var poller = Util.Spawn(() =>
                {
                    var buf = new byte[8];
                    while (!pull.TryReceiveBytes(buf, 0, buf.Length, out length))
                    {
                        if (++tries == 1000) polling.Set();
                    }
                });
                Assert.True(polling.Wait(Util.Deadline), "poller spinning");
                CollectRepeatedly(20);
                push.SendBytes(new byte[] { 9 }, 0, 1);
                poller();
                Assert.Equal(1, length, "the spinning receiver got the message");
                Assert.True(tries >= 1000, "it tried without waiting: " + tries);
            }
        }

        // The send side: a sender at its high-water mark waits (P/Invoke) until a collection-
        // heavy receiver drains it; nothing is lost or reordered.
        [Test(TimeoutSeconds = 60)]
        static void ASenderAtItsLimitWaitsAndLosesNothing(string transport)
        {
            const int Count = 50000;
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                pull.ReceiveHighWatermark = 10;
                push.SendHighWatermark = 10;
                string ep = Util.BindFresh(pull, transport);
                push.Connect(ep);
                var sender = Util.Spawn(() =>
                {
                    var b = new byte[4];
                    for (int i = 0; i < Count; i++)
                    {
                        BitConverter.GetBytes(i).CopyTo(b, 0);
                        push.SendBytes(b, 0, 4);
                    }
                });
                var buf = new byte[4];
                for (int i = 0; i < Count; i++)
                {
                    Assert.Equal(4, pull.ReceiveBytes(buf, 0, 4), "length");
                    Assert.Equal(i, BitConverter.ToInt32(buf, 0), "message order");
                    if (i % 10000 == 0) GC.Collect();
                }
                sender();
            }
        }
    }
}
