// Polling several sockets, and single-socket PollIn/PollOut.

using System;
using System.Diagnostics;

namespace ZeroMQ.Tests
{
    static class PollTests
    {
        [Test]
        static void PollReportsTheReadySocket(string transport)
        {
            using (var ctx = new ZContext())
            using (var a = new ZSocket(ctx, ZSocketType.PULL))
            using (var b = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                Util.BindFresh(a, transport);
                string epB = Util.BindFresh(b, transport);
                push.Connect(epB);
                var items = new[] { ZPollItem.CreateReceiver(a), ZPollItem.CreateReceiver(b) };
                var sw = Stopwatch.StartNew();
                Assert.Equal(0, ZPolling.Poll(items, TimeSpan.FromMilliseconds(50)), "nothing ready");
                Assert.True(sw.ElapsedMilliseconds >= 40, "waited for the timeout: " + sw.ElapsedMilliseconds);
                push.SendString("sensor 7 ready");
                Assert.Equal(1, ZPolling.Poll(items, Util.Deadline), "one ready");
                Assert.True(!items[0].CanReceive && items[1].CanReceive, "the right one");
                Assert.Equal("sensor 7 ready", b.ReceiveString(), "content");
                Assert.True(push.PollOut(TimeSpan.Zero), "room to send");
                Assert.True(!a.PollIn(TimeSpan.Zero), "nothing for a");
                Assert.True((b.Events & ZPollEvents.In) == 0, "b drained");
            }
        }

        [Test]
        static void PollArgumentsChecked()
        {
            using (var ctx = new ZContext())
            using (var s = new ZSocket(ctx, ZSocketType.PULL))
            {
                Assert.Throws<ArgumentNullException>(() => ZPolling.Poll(null, TimeSpan.Zero), "null list");
                Assert.Throws<ArgumentOutOfRangeException>(() => ZPolling.Poll(new ZPollItem[0], TimeSpan.Zero), "empty list");
                Assert.Throws<ArgumentException>(() => new ZPollItem(s, ZPollEvents.None), "no events");
                Assert.Throws<ArgumentOutOfRangeException>(() => s.PollIn(TimeSpan.FromMilliseconds(-3)), "negative timeout");
            }
        }
    }
}
