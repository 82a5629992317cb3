// tls:// and wss:// through the binding: the ZMQ_WSS_* options (WssKeyPem, WssCertPem,
// WssTrustPem, WssHostname) and the TLS-Peer-Subject property (ZFrame.GetOption), over loopback
// with certificates the openssl CLI makes at test time.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;

namespace ZeroMQ.Tests
{
    /// <summary>Two CAs ("Test CA" and "Other CA"), a server certificate of Test CA for
    /// IP:127.0.0.1 and DNS:localhost, a client certificate of Test CA, as PEM text by file
    /// name ("ca.pem", "server.key", ...). Made once per run.</summary>
    static class TestCertificates
    {
        public const string ServerSubject = "CN=server,O=oxmq tests";
        public const string ClientSubject = "CN=client,O=oxmq tests";

        static readonly Lazy<Dictionary<string, string>> pem = new Lazy<Dictionary<string, string>>(Make);

        public static string Get(string name) { return pem.Value[name]; }

        static Dictionary<string, string> Make()
        {
            string dir = Path.Combine(Path.GetTempPath(), "oxmq-cs-tls-" + Guid.NewGuid().ToString("N").Substring(0, 8));
            Directory.CreateDirectory(dir);
            try
            {
                foreach (string ca in new[] { "ca", "other-ca" })
                    OpenSsl(dir, "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj \"/CN="
                                 + (ca == "ca" ? "Test CA" : "Other CA") + "\" -keyout " + ca + ".key -out " + ca + ".pem");
                var leaves = new[]
                {
                    new[] { "server", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n" },
                    new[] { "client", "extendedKeyUsage=clientAuth\n" },
                };
                foreach (var leaf in leaves)
                {
                    string name = leaf[0];
                    File.WriteAllText(Path.Combine(dir, name + ".ext"), leaf[1]);
                    OpenSsl(dir, "req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj \"/O=oxmq tests/CN=" + name
                                 + "\" -keyout " + name + ".key -out " + name + ".csr");
                    OpenSsl(dir, "x509 -req -in " + name + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile "
                                 + name + ".ext -out " + name + ".pem");
                }
                var r = new Dictionary<string, string>();
                foreach (string f in Directory.GetFiles(dir))
                    if (f.EndsWith(".pem") || f.EndsWith(".key")) r[Path.GetFileName(f)] = File.ReadAllText(f);
                return r;
            }
            finally
            {
                Directory.Delete(dir, true);
            }
        }

        static void OpenSsl(string dir, string args)
        {
            var psi = new ProcessStartInfo("openssl", args)
            {
                UseShellExecute = false,
                WorkingDirectory = dir,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using (var p = Process.Start(psi))
            {
                string err = p.StandardError.ReadToEnd();
                p.StandardOutput.ReadToEnd();
                if (!p.WaitForExit(60000)) throw new AssertionException("openssl " + args + " did not finish");
                if (p.ExitCode != 0) throw new AssertionException("openssl " + args + " failed: " + err);
            }
        }

        /// <summary>A server's certificate and key (Test CA's "server").</summary>
        public static void Serve(ZSocket s)
        {
            s.WssCertPem = Get("server.pem");
            s.WssKeyPem = Get("server.key");
        }

        /// <summary>The client certificate and key (Test CA's "client").</summary>
        public static void Present(ZSocket s)
        {
            s.WssCertPem = Get("client.pem");
            s.WssKeyPem = Get("client.key");
        }
    }

    static class TlsTests
    {
        static readonly TimeSpan Quiet = TimeSpan.FromMilliseconds(300);

        [Test]
        static void TlsRequestReplyNamesTheServer()
        {
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            using (var req = new ZSocket(ctx, ZSocketType.REQ))
            {
                TestCertificates.Serve(rep);
                rep.Bind("tls://127.0.0.1:*");
                string ep = rep.LastEndpoint;
                Assert.True(ep.StartsWith("tls://127.0.0.1:") && !ep.EndsWith(":*"), "last endpoint names the port: " + ep);
                req.WssTrustPem = TestCertificates.Get("ca.pem");
                req.ReceiveTimeout = rep.ReceiveTimeout = Util.Deadline;
                req.Linger = TimeSpan.Zero;
                req.Connect(ep);
                for (int i = 0; i < 3; i++)
                {
                    req.SendString("q" + i);
                    using (ZFrame q = rep.ReceiveFrame())
                    {
                        Assert.Equal("q" + i, q.ReadString(), "request over tls");
                        Assert.Equal(null, q.GetOption("TLS-Peer-Subject"), "no client certificate, no subject");
                        Assert.Equal("REQ", q.GetOption("Socket-Type"), "Socket-Type property");
                    }
                    rep.SendString("a" + i);
                    using (ZFrame a = req.ReceiveFrame())
                    {
                        Assert.Equal("a" + i, a.ReadString(), "reply over tls");
                        Assert.Equal(TestCertificates.ServerSubject, a.GetOption("TLS-Peer-Subject"), "server's subject at the client");
                    }
                }
                // A large message crosses many TLS records.
                var big = new byte[1 << 20];
                for (int i = 0; i < big.Length; i++) big[i] = (byte)(i * 7);
                req.SendFrame(new ZFrame(big));
                using (ZFrame got = rep.ReceiveFrame())
                    Assert.SequenceEqual(big, got.Read(), "1 MiB over tls");
            }
        }

        [Test]
        static void TlsHostNameFromTheOption()
        {
            // The server's certificate names DNS:localhost; a client connecting by address and
            // told to expect "localhost" accepts it.
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                TestCertificates.Serve(pull);
                pull.Bind("tls://127.0.0.1:*");
                push.WssTrustPem = TestCertificates.Get("ca.pem");
                push.WssHostname = "localhost";
                push.Linger = TimeSpan.Zero;
                push.Connect(pull.LastEndpoint);
                push.SendString("by name");
                Assert.True(pull.PollIn(Util.Deadline), "message within the deadline");
                using (ZFrame f = pull.ReceiveFrame())
                    Assert.Equal("by name", f.ReadString(), "message");
            }
        }

        [Test]
        static void MutualTlsNamesTheClient()
        {
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var mon = ZMonitor.Create(pull))
            {
                TestCertificates.Serve(pull);
                pull.WssTrustPem = TestCertificates.Get("ca.pem"); // requires client certificates
                pull.Bind("tls://127.0.0.1:*");
                string ep = pull.LastEndpoint;
                // Without a certificate: refused by the server, nothing arrives.
                using (var anon = new ZSocket(ctx, ZSocketType.PUSH))
                {
                    anon.WssTrustPem = TestCertificates.Get("ca.pem");
                    AssertRefused(anon, ep, mon, pull);
                }
                using (var push = new ZSocket(ctx, ZSocketType.PUSH))
                {
                    push.WssTrustPem = TestCertificates.Get("ca.pem");
                    TestCertificates.Present(push);
                    push.Linger = TimeSpan.Zero;
                    push.Connect(ep);
                    push.SendString("hello");
                    Assert.True(pull.PollIn(Util.Deadline), "message within the deadline");
                    using (ZFrame f = pull.ReceiveFrame())
                    {
                        Assert.Equal("hello", f.ReadString(), "message");
                        Assert.Equal(TestCertificates.ClientSubject, f.GetOption("TLS-Peer-Subject"), "client's subject at the server");
                        Assert.Equal(null, f.GetOption("No-Such-Property"), "absent property");
                    }
                }
            }
        }

        /// <summary>Connects <paramref name="client"/> to <paramref name="ep"/>, whose handshake must
        /// fail: HANDSHAKE_FAILED_AUTH 400 at <paramref name="mon"/> (the monitor of the side that
        /// refuses), and nothing reaches <paramref name="server"/>.</summary>
        static void AssertRefused(ZSocket client, string ep, ZMonitor mon, ZSocket server)
        {
            client.Linger = TimeSpan.Zero;
            client.Connect(ep);
            ZError error;
            client.SendBytes(Util.Bytes("never"), 0, 5, ZSocketFlags.DontWait, out error); // EAGAIN once refused
            var e = mon.WaitFor(ZMonitorEvents.HandshakeFailedAuth | ZMonitorEvents.HandshakeFailedProtocol
                                | ZMonitorEvents.HandshakeSucceeded, Util.Deadline);
            Assert.True(e != null, "a handshake outcome within the deadline");
            Assert.Equal(ZMonitorEvents.HandshakeFailedAuth, e.Event, "refused: " + e);
            Assert.Equal(400, e.Value, "status");
            Assert.True(!server.PollIn(Quiet), "nothing may arrive");
        }

        /// <summary>A client that refuses the server's certificate: the handshake fails (AUTH 400
        /// at the client's monitor) and the server receives nothing.</summary>
        static void Refused(Action<ZSocket> configure)
        {
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            using (var mon = ZMonitor.Create(push))
            {
                TestCertificates.Serve(pull);
                pull.Bind("tls://127.0.0.1:*");
                configure(push);
                AssertRefused(push, pull.LastEndpoint, mon, pull);
            }
        }

        [Test]
        static void TlsClientTrustingAnotherCaIsRefused()
        {
            Refused(s => s.WssTrustPem = TestCertificates.Get("other-ca.pem"));
        }

        [Test]
        static void TlsWrongHostNameIsRefused()
        {
            Refused(s =>
            {
                s.WssTrustPem = TestCertificates.Get("ca.pem");
                s.WssHostname = "other.example";
            });
        }

        [Test]
        static void TlsClientTrustingOnlyTheSystemIsRefused()
        {
            // WssTrustSystem alone is a client's trust (no EINVAL at connect); the system's store
            // does not hold the test CA, so its server is refused.
            Refused(s => s.WssTrustSystem = true);
        }

        [Test]
        static void BadPemIsRefusedWhereItIsGiven()
        {
            using (var ctx = new ZContext())
            using (var s = new ZSocket(ctx, ZSocketType.PUSH))
            {
                var e = Assert.Throws<ZException>(() => s.WssTrustPem = "not a certificate", "trust PEM without a certificate");
                Assert.Equal(ZError.EINVAL, e.Error, "errno");
                Assert.Throws<ZException>(() => s.WssKeyPem = "not a key", "key PEM without a key");
                // A key PEM block whose content is no key passes the PEM check and is refused
                // where the key is used: at bind.
                s.WssCertPem = TestCertificates.Get("server.pem");
                s.WssKeyPem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
                e = Assert.Throws<ZException>(() => s.Bind("tls://127.0.0.1:*"), "bind with a key that is no key");
                Assert.Equal(ZError.EINVAL, e.Error, "errno at bind");
                // A client that trusts nothing cannot connect.
                using (var c = new ZSocket(ctx, ZSocketType.PUSH))
                    Assert.Equal(ZError.EINVAL, Assert.Throws<ZException>(() => c.Connect("tls://127.0.0.1:5555"), "connect").Error, "errno at connect");
            }
        }

        [Test]
        static void WssRequestReplyWithMutualTls()
        {
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            using (var req = new ZSocket(ctx, ZSocketType.REQ))
            {
                TestCertificates.Serve(rep);
                rep.WssTrustPem = TestCertificates.Get("ca.pem");
                rep.Bind("wss://127.0.0.1:*/x");
                string ep = rep.LastEndpoint;
                Assert.True(ep.StartsWith("wss://127.0.0.1:") && ep.EndsWith("/x") && !ep.Contains("*"), "last endpoint: " + ep);
                req.WssTrustPem = TestCertificates.Get("ca.pem");
                TestCertificates.Present(req);
                req.ReceiveTimeout = rep.ReceiveTimeout = Util.Deadline;
                req.Linger = TimeSpan.Zero;
                req.Connect(ep.Replace("127.0.0.1", "localhost"));
                req.SendString("over wss");
                using (ZFrame q = rep.ReceiveFrame())
                {
                    Assert.Equal("over wss", q.ReadString(), "request over wss");
                    Assert.Equal(TestCertificates.ClientSubject, q.GetOption("TLS-Peer-Subject"), "client's subject at the server");
                }
                rep.SendString("back");
                using (ZFrame a = req.ReceiveFrame())
                {
                    Assert.Equal("back", a.ReadString(), "reply over wss");
                    Assert.Equal(TestCertificates.ServerSubject, a.GetOption("TLS-Peer-Subject"), "server's subject at the client");
                }
            }
        }

        [Test]
        static void PeerMetadataBesideTheSubject()
        {
            // A peer's own property (ZMQ_METADATA), however long, and the certificate's subject.
            string value = new string('v', 6000);
            using (var ctx = new ZContext())
            using (var pull = new ZSocket(ctx, ZSocketType.PULL))
            using (var push = new ZSocket(ctx, ZSocketType.PUSH))
            {
                TestCertificates.Serve(pull);
                pull.WssTrustPem = TestCertificates.Get("ca.pem");
                pull.Bind("tls://127.0.0.1:*");
                push.WssTrustPem = TestCertificates.Get("ca.pem");
                TestCertificates.Present(push);
                push.SetOption(ZSocketOption.METADATA, "X-Long:" + value);
                push.Linger = TimeSpan.Zero;
                push.Connect(pull.LastEndpoint);
                push.SendString("m");
                pull.ReceiveTimeout = Util.Deadline;
                using (ZFrame f = pull.ReceiveFrame())
                {
                    Assert.Equal(value, f.GetOption("X-Long"), "the peer's metadata");
                    Assert.Equal(TestCertificates.ClientSubject, f.GetOption("TLS-Peer-Subject"), "client's subject");
                }
            }
        }
    }
}
