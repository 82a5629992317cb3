// Options as properties: round trips and read-only values.

using System;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class OptionTests
    {
        [Test]
        static void PropertiesRoundTrip()
        {
            using (var ctx = new ZContext())
            using (var s = new ZSocket(ctx, ZSocketType.DEALER))
            {
                Assert.Equal(Timeout.InfiniteTimeSpan, s.Linger, "default linger");
                s.Linger = TimeSpan.FromMilliseconds(250);
                Assert.Equal(TimeSpan.FromMilliseconds(250), s.Linger, "linger");
                s.ReceiveHighWatermark = 5000;
                s.SendHighWatermark = 7000;
                Assert.Equal(5000, s.ReceiveHighWatermark, "rcvhwm");
                Assert.Equal(7000, s.SendHighWatermark, "sndhwm");
                s.Identity = Util.Bytes("serial-gw");
                Assert.Equal("serial-gw", Util.Text(s.Identity, s.Identity.Length), "identity");
                s.MaxMessageSize = 1 << 20;
                Assert.Equal(1L << 20, s.MaxMessageSize, "maxmsgsize");
                s.Immediate = true;
                Assert.True(s.Immediate, "immediate");
                s.SendTimeout = TimeSpan.FromSeconds(2);
                Assert.Equal(TimeSpan.FromSeconds(2), s.SendTimeout, "sndtimeo");
                s.Affinity = 1;
                Assert.Equal(1UL, s.Affinity, "affinity");
                s.ReconnectInterval = TimeSpan.FromMilliseconds(50);
                Assert.Equal(TimeSpan.FromMilliseconds(50), s.ReconnectInterval, "reconnect");
                Assert.Equal(ZSocketType.DEALER, s.NativeType, "type");
                Assert.True(!s.ReceiveMore, "rcvmore");
                s.Bind("tcp://127.0.0.1:*");
                string ep = s.LastEndpoint;
                Assert.True(ep.StartsWith("tcp://127.0.0.1:") && int.Parse(ep.Substring(16)) > 0, "last endpoint with the chosen port: " + ep);
                Assert.Equal(7000, s.GetOptionInt32(ZSocketOption.SNDHWM), "generic getter");
            }
        }

        [Test]
        static void ContextOptions()
        {
            using (var ctx = new ZContext())
            {
                ctx.ThreadPoolSize = 2;
                Assert.Equal(2, ctx.ThreadPoolSize, "io threads");
                Assert.True(ctx.MaxSockets > 0, "max sockets");
                Assert.True(ZContext.Has("ipc"), "has ipc");
                Assert.True(!ZContext.Has("no-such-capability"), "has not");
                Assert.Equal(4, ZContext.Version.Major, "major version");
            }
        }
    }
}
