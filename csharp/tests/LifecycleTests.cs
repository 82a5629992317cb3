// Shutdown, disposal and misuse: a blocked receive ends with ETERM on context shutdown, the
// process exits with a receive blocked, and misuse gives exceptions rather than crashes.

using System;
using System.Diagnostics;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

namespace ZeroMQ.Tests
{
    static class LifecycleTests
    {
        // Starts a thread blocked in a receive on a fresh PULL socket; the returned join gives the
        // exception the receive ended with.
        static Func<Exception> BlockedReceiver(ZContext ctx, bool disposeSocket, ManualResetEventSlim started)
        {
            Exception seen = null;
            var t = new Thread(() =>
            {
                var s = new ZSocket(ctx, ZSocketType.PULL);
                try
                {
                    s.Bind("inproc://blocked-" + Guid.NewGuid().ToString("N"));
                    started.Set();
                    s.ReceiveBytes(new byte[8], 0, 8);
                }
                catch (Exception e)
                {
                    seen = e;
                }
                finally
                {
                    if (disposeSocket) s.Dispose();
                }
            });
            t.IsBackground = true;
            t.Start();
            return () =>
            {
                if (!t.Join(Util.Deadline)) throw new AssertionException("the blocked receive did not end");
                return seen;
            };
        }

        [Test]
        static void BlockedReceiveEndsOnContextDispose()
        {
            var ctx = new ZContext();
            var started = new ManualResetEventSlim();
            var join = BlockedReceiver(ctx, true, started);
            Assert.True(started.Wait(Util.Deadline), "receiver started");
            // Whether the receive has begun waiting or not, it must end with ETERM.
            var sw = Stopwatch.StartNew();
            ctx.Dispose(); // a socket is open: shuts down, does not block
            Assert.True(sw.ElapsedMilliseconds < 5000, "Dispose did not wait for the open socket");
            Exception e = join();
            Assert.True(e is ZTerminatedException, "ETERM as ZTerminatedException, got " + e);
            Assert.Equal(ZError.ETERM, ((ZException)e).Error, "error");
            Assert.Throws<ObjectDisposedException>(() => new ZSocket(ctx, ZSocketType.PUB), "no sockets from a disposed context");
        }

        [Test]
        static void ShutdownMakesLaterCallsThrowETerm()
        {
            using (var ctx = new ZContext())
            using (var s = new ZSocket(ctx, ZSocketType.PULL))
            {
                var started = new ManualResetEventSlim();
                var join = BlockedReceiver(ctx, true, started);
                Assert.True(started.Wait(Util.Deadline), "receiver started");
                ctx.Shutdown();
                Assert.True(join() is ZTerminatedException, "blocked receive ended with ETERM");
                Assert.Throws<ZTerminatedException>(() => s.ReceiveBytes(new byte[1], 0, 1), "later receive");
                int len;
                Assert.Throws<ZTerminatedException>(() => s.TryReceiveBytes(new byte[1], 0, 1, out len), "non-blocking receive: ETERM is not EAGAIN");
                ZError err;
                Assert.Equal(-1, s.ReceiveBytes(new byte[1], 0, 1, ZSocketFlags.None, out err), "error overload");
                Assert.Equal(ZError.ETERM, err, "error overload reports ETERM");
            }
        }

        [Test]
        static void DisposeFromAnotherThreadWhileBlocked()
        {
            using (var ctx = new ZContext())
            {
                var s = new ZSocket(ctx, ZSocketType.PULL);
                s.Bind("inproc://dispose-while-blocked");
                var started = new ManualResetEventSlim();
                Exception seen = null;
                var join = Util.Spawn(() =>
                {
                    started.Set();
                    try { s.ReceiveBytes(new byte[8], 0, 8); }
                    catch (Exception e) { seen = e; }
                });
                Assert.True(started.Wait(Util.Deadline), "receiver started");
                s.Dispose(); // the close waits for the receive in flight: no use after free
                Assert.True(s.IsDisposed, "disposed");
                ctx.Shutdown();
                join();
                Assert.True(seen is ZTerminatedException || seen is ObjectDisposedException,
                            "the receive ended with ETERM or as disposed, got " + seen);
            }
        }

        // Sends and receives that do not wait go as raw calls without an interlocked gate
        // (RawCallGate): a Dispose on another thread must still never close the socket under
        // one of them. The owner hammers both directions (its sends reach the HWM, so failed raw
        // calls move on to the counted gate too) until the Dispose makes them throw.
        [Test(TimeoutSeconds = 60)]
        static void DisposeRacingRawCallsEndsInObjectDisposed()
        {
            using (var ctx = new ZContext())
            {
                for (int round = 0; round < 200; round++)
                {
                    var ep = "inproc://raw-race-" + round;
                    var s = new ZSocket(ctx, ZSocketType.PAIR);
                    s.SendHighWatermark = 16;
                    s.Bind(ep);
                    using (var peer = new ZSocket(ctx, ZSocketType.PAIR))
                    {
                        peer.Connect(ep);
                        var one = new byte[] { 1, 2, 3, 4 };
                        for (int i = 0; i < 8; i++) peer.SendBytes(one, 0, one.Length);
                        int calls = 0;
                        Exception seen = null;
                        var started = new ManualResetEventSlim();
                        var owner = new Thread(() =>
                        {
                            var buf = new byte[4];
                            try
                            {
                                while (true)
                                {
                                    int n;
                                    s.TryReceiveBytes(buf, 0, buf.Length, out n);
                                    s.TrySendBytes(one, 0, one.Length, ZSocketFlags.DontWait);
                                    if (++calls == 20) started.Set();
                                }
                            }
                            catch (Exception e) { seen = e; started.Set(); }
                        });
                        owner.IsBackground = true;
                        owner.Start();
                        Assert.True(started.Wait(Util.Deadline), "the owner started");
                        s.Dispose();
                        Assert.True(owner.Join(Util.Deadline), "the owner's calls ended");
                        Assert.True(seen is ObjectDisposedException, "round " + round + ": " + seen);
                    }
                }
            }
        }

        // A socket may move between threads (one at a time, as in libzmq): the thread that made
        // the first raw call owns the gate's raw entry; the others take its counted entry.
        [Test]
        static void ASocketUsedByThreadsInTurnKeepsWorking(string transport)
        {
            using (var ctx = new ZContext())
            using (var a = new ZSocket(ctx, ZSocketType.PAIR))
            using (var b = new ZSocket(ctx, ZSocketType.PAIR))
            {
                string ep = Util.BindFresh(a, transport);
                b.Connect(ep);
                a.ReceiveTimeout = b.ReceiveTimeout = Util.Deadline;
                var buf = new byte[8];
                Action exchange = () =>
                {
                    for (byte i = 0; i < 100; i++)
                    {
                        a.SendBytes(new[] { i }, 0, 1);
                        Assert.Equal(1, b.ReceiveBytes(buf, 0, buf.Length), "length");
                        Assert.Equal(i, buf[0], "content");
                        b.SendBytes(buf, 0, 1);
                        Assert.Equal(1, a.ReceiveBytes(buf, 0, buf.Length), "reply length");
                    }
                };
                exchange();                // this thread owns the raw entries
                Util.Spawn(exchange)();    // another thread: the counted entries
                exchange();
                Util.Spawn(() => a.Dispose())(); // disposed by a thread that never owned it
                Assert.Throws<ObjectDisposedException>(() => a.SendBytes(buf, 0, 1), "send after dispose");
            }
        }

        [Test]
        static void DisposedSocketThrowsObjectDisposed()
        {
            using (var ctx = new ZContext())
            {
                var s = new ZSocket(ctx, ZSocketType.PUSH);
                s.Dispose();
                s.Dispose(); // idempotent
                var buf = new byte[4];
                Assert.Throws<ObjectDisposedException>(() => s.ReceiveBytes(buf, 0, 4), "receive");
                Assert.Throws<ObjectDisposedException>(() => s.SendBytes(buf, 0, 4), "send");
                Assert.Throws<ObjectDisposedException>(() => s.Bind("inproc://x"), "bind");
                Assert.Throws<ObjectDisposedException>(() => s.Linger = TimeSpan.Zero, "option");
                Assert.Throws<ObjectDisposedException>(() => s.PollIn(TimeSpan.Zero), "poll");
                Assert.Throws<ObjectDisposedException>(() => s.ReceiveFrame(), "frame");
            }
        }

        [Test]
        static void MisuseGivesTypedExceptions()
        {
            using (var ctx = new ZContext())
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            using (var req = new ZSocket(ctx, ZSocketType.REQ))
            {
                Assert.Equal(ZError.EINVAL, Assert.Throws<ZException>(() => push.SetOption((ZSocketOption)9999, 1), "unknown option").Error, "unknown option");
                Assert.Equal(ZError.EINVAL, Assert.Throws<ZException>(() => push.Subscribe("x"), "subscribe on PUSH").Error, "subscribe on PUSH");
                Assert.Equal(ZError.EPROTONOSUPPORT, Assert.Throws<ZException>(() => push.Connect("bogus://x"), "unknown transport").Error, "unknown transport");
                Assert.Throws<ZException>(() => push.Bind("tcp://127.0.0.1:notaport"), "bad port");
                Assert.Throws<ArgumentNullException>(() => push.Bind(null), "null endpoint");
                Assert.Throws<ArgumentException>(() => push.Bind("inproc://a\0b"), "NUL in endpoint");
                Assert.Throws<ArgumentOutOfRangeException>(() => push.ReceiveTimeout = TimeSpan.FromMilliseconds(-5), "negative timeout");
                Assert.Equal(ZError.EINVAL, Assert.Throws<ZException>(() => new ZSocket(ctx, (ZSocketType)99), "unknown type").Error, "unknown type");
                Assert.Equal(ZError.ENOTSUP, Assert.Throws<ZException>(() => push.ReceiveBytes(new byte[1], 0, 1), "receive on PUSH").Error, "receive on PUSH");
                req.SendTimeout = TimeSpan.Zero;
                Assert.Throws<ZTimeoutException>(() => req.SendString("first"), "no peer: EAGAIN");
                Assert.Throws<ZException>(() => req.ReceiveBytes(new byte[1], 0, 1), "REQ receive before a send: EFSM");
            }
        }

        [Test]
        static void ContextWithoutSocketsTerminatesOnDispose()
        {
            var ctx = new ZContext();
            using (var s = new ZSocket(ctx, ZSocketType.PAIR)) s.Bind("inproc://terminate-" + Guid.NewGuid().ToString("N"));
            ctx.Dispose();
            Assert.True(ctx.IsDisposed, "disposed");
            ctx.Dispose(); // idempotent
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void LeakSocket(ZContext ctx)
        {
            var s = new ZSocket(ctx, ZSocketType.PUSH);
            s.Connect("tcp://127.0.0.1:1"); // nobody listens: the message stays queued
            s.SendString("never delivered");
        }

        /// A socket that was never disposed is closed by the finalizer with linger 0, so the
        /// context's termination does not wait forever for its queued message.
        [Test]
        static void LeakedSocketDoesNotHoldUpTermination()
        {
            var ctx = new ZContext();
            var t = new Thread(() => LeakSocket(ctx));
            t.Start();
            t.Join();
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Assert.Equal(0, ctx.OpenSocketCount, "the forgotten socket was closed by its finalizer");
            // No socket open: Dispose terminates now, which would wait forever for the queued
            // message had the finalizer closed the socket with the default linger.
            var disposed = new ManualResetEventSlim();
            var d = new Thread(() => { ctx.Dispose(); disposed.Set(); });
            d.IsBackground = true;
            d.Start();
            disposed.Wait(Util.Deadline);
            Assert.True(disposed.IsSet, "context terminated after the leaked socket was finalized");
        }

        static Process Child(string mode)
        {
            var psi = new ProcessStartInfo("mono", "\"" + typeof(Program).Assembly.Location + "\" --child " + mode)
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            return Process.Start(psi);
        }

        static void ExpectExit(string mode)
        {
            using (Process p = Child(mode))
            {
                if (!p.WaitForExit(20000))
                {
                    p.Kill();
                    throw new AssertionException("child '" + mode + "' did not exit within 20 s");
                }
                string err = p.StandardError.ReadToEnd();
                string output = p.StandardOutput.ReadToEnd();
                Assert.Equal(0, p.ExitCode, "exit code of child '" + mode + "' (stderr: " + err + ")");
                Assert.True(output.Contains("blocked"), "the child reached its blocked receive: " + output);
            }
        }

        /// The process exits while a background thread is blocked in a receive.
        [Test(TimeoutSeconds = 60)]
        static void ProcessExitsWithBackgroundReceiveBlocked() { ExpectExit("background-blocked"); }

        /// Main disposes the context while a foreground thread is blocked: the thread gets ETERM,
        /// disposes its socket, ends, and the process exits.
        [Test(TimeoutSeconds = 60)]
        static void ProcessExitsAfterDisposingContextUnderForegroundReceive() { ExpectExit("foreground-dispose"); }
    }

    /// Modes of the child process (tests.exe --child MODE).
    static class ChildModes
    {
        public static int Run(string mode)
        {
            var ctx = new ZContext();
            var started = new ManualResetEventSlim();
            Exception ended = null;
            var t = new Thread(() =>
            {
                using (var s = new ZSocket(ctx, ZSocketType.SUB))
                {
                    s.SubscribeAll();
                    s.Bind("tcp://127.0.0.1:*");
                    started.Set();
                    try { s.ReceiveBytes(new byte[8], 0, 8); }
                    catch (ZTerminatedException e) { ended = e; }
                }
            });
            t.IsBackground = mode == "background-blocked";
            t.Start();
            started.Wait();
            Console.WriteLine("blocked");
            Console.Out.Flush();
            if (mode == "foreground-dispose")
            {
                ctx.Dispose();
                if (!t.Join(10000)) return 3;
                return ended is ZTerminatedException ? 0 : 4;
            }
            return 0; // return from Main with the background thread inside zmq_recv
        }
    }
}
