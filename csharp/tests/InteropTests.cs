// Interop with libzmq peers: a Python process (pyzmq, libzmq 4.3.5 bundled) talks to the C#
// side over tcp, in each direction of bind/connect, with NULL and CURVE security.

using System;
using System.Diagnostics;
using System.IO;
using System.Threading.Tasks;

namespace ZeroMQ.Tests
{
    static class InteropTests
    {
        sealed class Peer : IDisposable
        {
            readonly Process p;

            public Peer(params string[] args)
            {
                string script = Path.Combine(Path.GetDirectoryName(typeof(Peer).Assembly.Location), "peer.py");
                var psi = new ProcessStartInfo("python3", "\"" + script + "\" " + string.Join(" ", args))
                {
                    UseShellExecute = false,
                    RedirectStandardInput = true,
                    RedirectStandardOutput = true,
                    RedirectStandardError = true,
                };
                p = Process.Start(psi);
            }

            public string ReadLine()
            {
                var t = Task.Run(() => p.StandardOutput.ReadLine());
                if (!t.Wait(Util.Deadline)) throw new AssertionException("the Python peer printed nothing within " + Util.Deadline);
                if (t.Result == null) throw new AssertionException("the Python peer ended early: " + p.StandardError.ReadToEnd());
                return t.Result;
            }

            public void CloseInput() { p.StandardInput.Close(); }

            public int Wait()
            {
                if (!p.WaitForExit((int)Util.Deadline.TotalMilliseconds))
                    throw new AssertionException("the Python peer did not exit");
                return p.ExitCode;
            }

            public void Dispose()
            {
                if (!p.HasExited) p.Kill();
                p.Dispose();
            }
        }

        static void ServeDeviceRequests(ZSocket rep, int count)
        {
            for (int i = 0; i < count; i++)
                rep.SendString(PatternTests.DeviceReply(rep.ReceiveString()));
        }

        [Test(TimeoutSeconds = 60)]
        static void PythonRequestsToCSharpRep()
        {
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            {
                rep.ReceiveTimeout = Util.Deadline;
                rep.Bind("tcp://127.0.0.1:*");
                using (var py = new Peer("req", rep.LastEndpoint))
                {
                    ServeDeviceRequests(rep, 2);
                    Assert.Equal("ok serial /dev/ttyUSB0 opened at 115200 baud", py.ReadLine(), "first reply as Python saw it");
                    Assert.Equal("ok playing chime.wav", py.ReadLine(), "second reply");
                    Assert.Equal(0, py.Wait(), "peer exit code");
                }
            }
        }

        [Test(TimeoutSeconds = 60)]
        static void PythonCurveClientToCSharpServer()
        {
            string pub, sec;
            ZCurve.GenerateKeyPair(out pub, out sec);
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            {
                rep.CurveServer = true;
                rep.CurveSecretKey = Util.Bytes(sec);
                rep.ReceiveTimeout = Util.Deadline;
                rep.Bind("tcp://127.0.0.1:*");
                using (var py = new Peer("curve-req", rep.LastEndpoint, pub))
                {
                    ServeDeviceRequests(rep, 2);
                    Assert.Equal("ok serial /dev/ttyUSB0 opened at 115200 baud", py.ReadLine(), "first reply");
                    Assert.Equal("ok playing chime.wav", py.ReadLine(), "second reply");
                    Assert.Equal(0, py.Wait(), "peer exit code");
                }
            }
        }

        [Test(TimeoutSeconds = 60)]
        static void CSharpLogsToPythonCollector()
        {
            const int lines = 500;
            using (var py = new Peer("pull-bind", lines.ToString()))
            using (var ctx = new ZContext())
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                string ep = py.ReadLine();
                push.Connect(ep);
                for (int i = 0; i < lines; i++)
                {
                    byte[] b = Util.Bytes("device-py-test " + i + " WARN fan speed low");
                    push.SendBytes(b, 0, b.Length);
                }
                push.SendString("END");
                Assert.Equal("got " + lines, py.ReadLine(), "the collector's count");
                Assert.Equal(0, py.Wait(), "peer exit code");
            }
        }

        [Test(TimeoutSeconds = 60)]
        static void PythonPublisherToCSharpSubscriber()
        {
            using (var py = new Peer("pub-bind"))
            using (var ctx = new ZContext())
            using (var sub = new ZSocket(ctx, ZSocketType.SUB))
            {
                string ep = py.ReadLine();
                sub.Subscribe("hw/button/1");
                sub.ReceiveTimeout = Util.Deadline;
                sub.Connect(ep);
                var topic = new byte[32];
                var payload = new byte[32];
                for (int i = 0; i < 5; i++)
                {
                    int t = sub.ReceiveBytes(topic, 0, topic.Length);
                    Assert.Equal("hw/button/1", Util.Text(topic, t), "only the subscribed topic");
                    Assert.True(sub.ReceiveMore, "payload follows");
                    int p = sub.ReceiveBytes(payload, 0, payload.Length);
                    Assert.True(Util.Text(payload, p).StartsWith("pressed "), "payload");
                }
                py.CloseInput();
                Assert.Equal(0, py.Wait(), "peer exit code");
            }
        }
    }
}
