// Frames and messages: content, multi-part round trips, ownership on send, disposal.

using System;
using System.Linq;

namespace ZeroMQ.Tests
{
    static class FrameTests
    {
        [Test]
        static void FrameContentAndCopies()
        {
            using (var f = new ZFrame("play audio chime.wav"))
            {
                Assert.Equal(20, f.Length, "length");
                Assert.Equal("play audio chime.wav", f.ReadString(), "text");
                Assert.Equal((byte)'p', f.AsSpan()[0], "span");
                var part = new byte[4];
                Assert.Equal(4, f.Read(part, 0, 4), "partial read");
                Assert.Equal("play", Util.Text(part, 4), "partial content");
                using (ZFrame d = f.Duplicate())
                {
                    Assert.Equal(f.ReadString(), d.ReadString(), "duplicate");
                }
                Assert.Equal("play audio chime.wav", f.ReadString(), "original intact after the duplicate's disposal");
            }
            using (var z = new ZFrame(5))
                Assert.SequenceEqual(new byte[5], z.Read(), "zero-filled");
            using (var b = new ZFrame(new byte[] { 1, 2, 3, 4 }, 1, 2))
                Assert.SequenceEqual(new byte[] { 2, 3 }, b.Read(), "slice");
            var gone = new ZFrame("x");
            gone.Dispose();
            gone.Dispose();
            Assert.Throws<ObjectDisposedException>(() => { int n = gone.Length; }, "disposed frame");
            Assert.Throws<ArgumentOutOfRangeException>(() => new ZFrame(-1), "negative size");
            Assert.Throws<ArgumentNullException>(() => new ZFrame((string)null), "null text");
        }

        // Frames dropped without Dispose are freed by their finalizer: 400 MB of forgotten
        // 4 MB frames, collected as they go, must not stay resident.
        [Test(TimeoutSeconds = 120)]
        static void ForgottenFramesAreFreedByTheFinalizer()
        {
            const int size = 4 << 20;
            long before = Resident();
            for (int i = 0; i < 100; i++)
            {
                Forget(size);
                if (i % 10 == 9)
                {
                    GC.Collect();
                    GC.WaitForPendingFinalizers();
                }
            }
            GC.Collect();
            GC.WaitForPendingFinalizers();
            long grown = Resident() - before;
            Assert.True(grown < 200L << 20, "resident memory grew by " + (grown >> 20) + " MB");
        }

        // Environment.WorkingSet is 0 on Mono.
        static long Resident()
        {
            using (var p = System.Diagnostics.Process.GetCurrentProcess()) return p.WorkingSet64;
        }

        [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
        static void Forget(int size)
        {
            var f = new ZFrame(size); // zero-filled, so every page is touched
            Assert.Equal(size, f.Length, "length");
        }

        // A frame is not thread-safe, but a Dispose racing reads on another thread must end in
        // ObjectDisposedException, never in a read of freed memory.
        [Test(TimeoutSeconds = 60)]
        static void DisposeRacingReadsEndsInObjectDisposed()
        {
            for (int round = 0; round < 200; round++)
            {
                var f = new ZFrame("frame " + round);
                int reads = 0;
                Exception seen = null;
                var started = new System.Threading.ManualResetEventSlim();
                var reader = new System.Threading.Thread(() =>
                {
                    try
                    {
                        while (true)
                        {
                            if (f.ReadString() != "frame " + round) throw new Exception("wrong content");
                            if (++reads == 10) started.Set();
                        }
                    }
                    catch (Exception e) { seen = e; started.Set(); }
                });
                reader.Start();
                started.Wait();
                f.Dispose();
                reader.Join();
                Assert.True(seen is ObjectDisposedException, "round " + round + ": " + seen);
            }
        }

        [Test]
        static void MultipartMessagesThroughRouter(string transport)
        {
            using (var ctx = new ZContext())
            using (var router = new ZSocket(ctx, ZSocketType.ROUTER))
            using (var dealer = new ZSocket(ctx, ZSocketType.DEALER))
            {
                string ep = Util.BindFresh(router, transport);
                router.ReceiveTimeout = dealer.ReceiveTimeout = Util.Deadline;
                dealer.Identity = Util.Bytes("audio-1");
                dealer.Connect(ep);
                using (var m = new ZMessage())
                {
                    m.Add("play");
                    m.Add(Util.Bytes("chime.wav"));
                    m.Add(new ZFrame(0));
                    dealer.SendMessage(m);
                    Assert.Equal(0, m.Count, "a sent message is emptied");
                }
                using (ZMessage got = router.ReceiveMessage())
                {
                    Assert.SequenceEqual(new[] { "audio-1", "play", "chime.wav", "" }, got.Select(f => f.ReadString()), "frames with the routing id");
                    Assert.True(got[0].More && got[1].More && got[2].More && !got[3].More, "more flags");
                    ZFrame id = got[0];
                    got.RemoveAt(0);
                    router.SendFrame(id, ZSocketFlags.More);
                    Assert.True(id.IsDisposed, "a sent frame is disposed");
                    router.SendFrame(new ZFrame("done"));
                }
                Assert.Equal("done", dealer.ReceiveString(), "reply routed back");
            }
        }

        [Test]
        static void SendFrameFailureKeepsTheFrame()
        {
            using (var ctx = new ZContext())
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            using (var f = new ZFrame("queued nowhere"))
            {
                ZError err;
                Assert.True(!push.SendFrame(f, ZSocketFlags.DontWait, out err), "no peer: not sent");
                Assert.Equal(ZError.EAGAIN, err, "EAGAIN");
                Assert.True(!f.IsDisposed && f.ReadString() == "queued nowhere", "the frame is still the caller's");
            }
        }
    }
}
