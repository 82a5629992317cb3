// The buffer receive path: lengths, truncation, argument checks, timeouts, non-blocking calls,
// and no managed allocation per message.

using System;
using System.Diagnostics;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class BufferTests
    {
        static void Pair(Action<ZSocket, ZSocket> body)
        {
            using (var ctx = new ZContext())
            using (var a = new ZSocket(ctx, ZSocketType.PAIR))
            using (var b = new ZSocket(ctx, ZSocketType.PAIR))
            {
                string ep = Util.BindFresh(a, "inproc");
                b.Connect(ep);
                body(a, b);
            }
        }

        [Test]
        static void ReceiveIntoOffsetAndTruncate()
        {
            Pair((a, b) =>
            {
                var msg = new byte[100];
                for (int i = 0; i < msg.Length; i++) msg[i] = (byte)(i + 1);
                a.SendBytes(msg, 0, msg.Length);
                var buf = new byte[20];
                int n = b.ReceiveBytes(buf, 5, 10);
                Assert.Equal(100, n, "full length of a truncated frame");
                for (int i = 0; i < 20; i++)
                    Assert.Equal(i >= 5 && i < 15 ? (byte)(i - 4) : (byte)0, buf[i], "byte " + i);
                a.SendBytes(msg, 10, 3);
                n = b.ReceiveBytes(buf, 0, buf.Length);
                Assert.Equal(3, n, "length");
                Assert.Equal((byte)11, buf[0], "first byte sent from offset 10");
                a.SendBytes(new byte[0], 0, 0);
                Assert.Equal(0, b.ReceiveBytes(buf, 0, 0), "empty frame into an empty range");
            });
        }

        [Test]
        static void ReceiveIntoSpan()
        {
            Pair((a, b) =>
            {
                a.SendBytes(new ReadOnlySpan<byte>(Util.Bytes("hello span")), ZSocketFlags.None);
                Span<byte> buf = stackalloc byte[32];
                int n = b.ReceiveBytes(buf);
                Assert.Equal(10, n, "length");
                Assert.Equal("hello span", Util.Text(buf.Slice(0, n).ToArray(), n), "content");
                ZError err;
                Assert.Equal(-1, b.ReceiveBytes(buf, ZSocketFlags.DontWait, out err), "nothing waiting");
                Assert.Equal(ZError.EAGAIN, err, "error");
            });
        }

        [Test]
        static void BadBufferArguments()
        {
            Pair((a, b) =>
            {
                var buf = new byte[8];
                Assert.Throws<ArgumentNullException>(() => b.ReceiveBytes(null, 0, 0), "null buffer");
                Assert.Throws<ArgumentOutOfRangeException>(() => b.ReceiveBytes(buf, -1, 1), "negative offset");
                Assert.Throws<ArgumentOutOfRangeException>(() => b.ReceiveBytes(buf, 9, 0), "offset past the end");
                Assert.Throws<ArgumentOutOfRangeException>(() => b.ReceiveBytes(buf, 4, 5), "range past the end");
                Assert.Throws<ArgumentOutOfRangeException>(() => b.ReceiveBytes(buf, 0, -1), "negative count");
                Assert.Throws<ArgumentOutOfRangeException>(() => a.SendBytes(buf, 2, 7), "send range past the end");
                Assert.Throws<ArgumentNullException>(() => a.SendBytes(null, 0, 0), "send null");
            });
        }

        [Test]
        static void NonBlockingAndErrorOverloads()
        {
            Pair((a, b) =>
            {
                var buf = new byte[8];
                int len;
                Assert.True(!b.TryReceiveBytes(buf, 0, buf.Length, out len), "nothing to receive yet");
                ZError err;
                Assert.Equal(-1, b.ReceiveBytes(buf, 0, 8, ZSocketFlags.DontWait, out err), "-1 on EAGAIN");
                Assert.True(err == ZError.EAGAIN && err.Number == 11, "EAGAIN reported: " + err);
                Assert.True(a.TrySendBytes(Util.Bytes("abc"), 0, 3, ZSocketFlags.None), "room to send");
                Assert.True(b.PollIn(Util.Deadline), "message arrives");
                Assert.True(b.TryReceiveBytes(buf, 0, buf.Length, out len), "received");
                Assert.Equal(3, len, "length");
                Assert.True(a.SendBytes(Util.Bytes("x"), 0, 1, ZSocketFlags.None, out err), "send with out error");
                Assert.Equal(ZError.None, err, "no error");
            });
        }

        [Test]
        static void ReceiveTimeoutThrowsTimeout()
        {
            Pair((a, b) =>
            {
                b.ReceiveTimeout = TimeSpan.FromMilliseconds(100);
                Assert.Equal(TimeSpan.FromMilliseconds(100), b.ReceiveTimeout, "timeout read back");
                var sw = Stopwatch.StartNew();
                var e = Assert.Throws<ZTimeoutException>(() => b.ReceiveBytes(new byte[4], 0, 4), "timeout");
                Assert.Equal(ZError.EAGAIN, e.Error, "error");
                Assert.True(e is ZException, "a ZException");
                Assert.True(sw.ElapsedMilliseconds >= 90 && sw.ElapsedMilliseconds < 10000, "waited about the timeout: " + sw.ElapsedMilliseconds + " ms");
                Assert.Throws<ZTimeoutException>(() => b.ReceiveFrame(), "frame receive times out too");
                b.ReceiveTimeout = Timeout.InfiniteTimeSpan;
                Assert.Equal(Timeout.InfiniteTimeSpan, b.ReceiveTimeout, "infinite again");
            });
        }

        // Receives count messages into one buffer and returns the bytes this thread allocated.
        static long ReceiveAllocations(ZSocket pull, int count, byte[] buf)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < count; i++)
            {
                if (pull.ReceiveBytes(buf, 0, buf.Length) != 1) throw new AssertionException("wrong size");
            }
            return GC.GetAllocatedBytesForCurrentThread() - before;
        }

        static long FrameAllocations(ZSocket pull, int count)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < count; i++)
            {
                using (ZFrame f = pull.ReceiveFrame())
                    if (f.Length != 1) throw new AssertionException("wrong size");
            }
            return GC.GetAllocatedBytesForCurrentThread() - before;
        }

        static long SendAllocations(ZSocket push, int count, byte[] msg)
        {
            long before = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < count; i++) push.SendBytes(msg, 0, 1, ZSocketFlags.None);
            return GC.GetAllocatedBytesForCurrentThread() - before;
        }

        /// Issue 18's target: zero managed bytes allocated per message on the buffer receive path
        /// over a million messages (and on the buffer send path). The frame path is measured
        /// beside it to show that the counter sees per-message allocations at all.
        [Test(TimeoutSeconds = 120)]
        static void ZeroAllocationsOverAMillionMessages()
        {
            const int Million = 1000000, Frames = 2000, Timed = 100000;
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            {
                string ep = Util.BindFresh(pull, "inproc");
                long sendAlloc = -1;
                var sender = Util.Spawn(() =>
                {
                    using (var push = new ZSocket(ctx, ZSocketType.PUSH))
                    {
                        push.Connect(ep);
                        var one = new byte[] { 42 };
                        push.SendBytes(one, 0, 1); // warm-up: compiles the send path
                        sendAlloc = SendAllocations(push, Million + Frames + Timed, one);
                    }
                });
                var buf = new byte[16];
                // Warm-up: compile both receive paths before measuring.
                ReceiveAllocations(pull, 1, buf);
                FrameAllocations(pull, 1);

                long frameBytes = FrameAllocations(pull, Frames - 1);
                long bufferBytes = ReceiveAllocations(pull, Million, buf);
                pull.ReceiveTimeout = TimeSpan.FromSeconds(30); // the timed path reads the clock
                long timedBytes = ReceiveAllocations(pull, Timed, buf);
                sender();
                Console.WriteLine("     frame path: " + (double)frameBytes / (Frames - 1) + " B/msg; buffer path: "
                                  + bufferBytes + " B over " + Million + "; timed: " + timedBytes + " B; send: " + sendAlloc + " B");
                Assert.True(frameBytes >= Frames - 1, "the frame path allocates per message (the counter works): " + frameBytes);
                Assert.Equal(0L, bufferBytes, "bytes allocated by 1,000,000 buffer receives");
                Assert.Equal(0L, timedBytes, "bytes allocated by buffer receives with a timeout");
                Assert.Equal(0L, sendAlloc, "bytes allocated by buffer sends");
            }
        }
    }
}
