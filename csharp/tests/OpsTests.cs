// oxmq only: connects that follow DNS, the socket's metrics name, and ZContext.Metrics.

using System;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class OpsTests
    {
        [Test]
        static void FollowedNameReachesThePeer()
        {
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                pull.Bind("tcp://127.0.0.1:*");
                string ep = pull.LastEndpoint;
                string port = ep.Substring(ep.LastIndexOf(':') + 1);
                Assert.True(!push.DnsFollow, "off by default");
                Assert.Equal(TimeSpan.FromSeconds(30), push.DnsInterval, "default interval");
                push.DnsFollow = true;
                push.DnsInterval = TimeSpan.FromSeconds(1);
                Assert.True(push.DnsFollow, "follow");
                Assert.Equal(TimeSpan.FromSeconds(1), push.DnsInterval, "interval");
                Assert.Equal(ZError.EINVAL, Assert.Throws<ZException>(() => push.DnsInterval = TimeSpan.FromMilliseconds(5), "interval too short").Error, "EINVAL");
                push.Connect("tcp://localhost:" + port);
                pull.ReceiveTimeout = TimeSpan.FromSeconds(5);
                for (int i = 0; i < 5; i++) push.SendString("n" + i);
                for (int i = 0; i < 5; i++) Assert.Equal("n" + i, pull.ReceiveString(), "message " + i);
            }
        }

        [Test]
        static void MetricsCarryTheSocketsName()
        {
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                pull.MetricsName = "audit";
                Assert.Equal("audit", pull.MetricsName, "name");
                Assert.Equal(ZError.EINVAL, Assert.Throws<ZException>(() => pull.MetricsName = "two words", "bad name").Error, "EINVAL");
                pull.Bind("inproc://cs-ops");
                push.Connect("inproc://cs-ops");
                push.SendString("a");
                push.SendString("b");
                Assert.Equal("a", pull.ReceiveString(), "a");
                Assert.Equal("b", pull.ReceiveString(), "b");
                // Another thread waits in a receive, so the PULL answers the request at once.
                var t = new Thread(() =>
                {
                    pull.ReceiveTimeout = TimeSpan.FromSeconds(10);
                    try { pull.ReceiveString(); } catch (ZException) { }
                });
                t.Start();
                string want = "oxmq_socket_received_messages_total{type=\"PULL\",name=\"audit\",endpoint=\"inproc://cs-ops\"} 2\n";
                string text = "";
                var deadline = DateTime.UtcNow.AddSeconds(10);
                while (!text.Contains(want) && DateTime.UtcNow < deadline) text = ctx.GetMetrics(TimeSpan.FromMilliseconds(200));
                Assert.True(text.Contains(want), "metrics text: " + text);
                Assert.True(ctx.Metrics.Contains("# TYPE oxmq_socket_received_messages_total counter"), "TYPE line");
                push.SendString("c");
                t.Join();
            }
        }
    }
}
