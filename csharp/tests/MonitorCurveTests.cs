// The socket monitor, and CURVE: keys, Z85, an encrypted request/reply, a refused client.

using System;

namespace ZeroMQ.Tests
{
    static class MonitorCurveTests
    {
        [Test]
        static void MonitorSeesListenAcceptAndHandshake()
        {
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            using (var mon = ZMonitor.Create(rep))
            using (var req = new ZSocket(ctx, ZSocketType.REQ))
            {
                rep.Bind("tcp://127.0.0.1:*");
                string ep = rep.LastEndpoint;
                var listening = mon.WaitFor(ZMonitorEvents.Listening, Util.Deadline);
                Assert.True(listening != null, "LISTENING");
                Assert.Equal(ep, listening.Address, "address of the listening event");
                req.Connect(ep);
                Assert.True(mon.WaitFor(ZMonitorEvents.Accepted, Util.Deadline) != null, "ACCEPTED");
                Assert.True(mon.WaitFor(ZMonitorEvents.HandshakeSucceeded, Util.Deadline) != null, "HANDSHAKE_SUCCEEDED");
                req.Dispose();
                Assert.True(mon.WaitFor(ZMonitorEvents.Disconnected, Util.Deadline) != null, "DISCONNECTED");
            }
        }

        [Test]
        static void CurveKeysAndZ85()
        {
            string pub, sec;
            ZCurve.GenerateKeyPair(out pub, out sec);
            Assert.Equal(40, pub.Length, "public key length");
            Assert.Equal(40, sec.Length, "secret key length");
            Assert.Equal(pub, ZCurve.PublicKeyOf(sec), "public key derived from the secret key");
            byte[] raw = ZCurve.Z85Decode(pub);
            Assert.Equal(32, raw.Length, "binary key");
            Assert.Equal(pub, ZCurve.Z85Encode(raw), "Z85 round trip");
            // The Z85 specification's test vector.
            Assert.Equal("HelloWorld", ZCurve.Z85Encode(new byte[] { 0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B }), "spec vector");
            Assert.Throws<ArgumentException>(() => ZCurve.Z85Decode("abc"), "length not a multiple of 5");
            Assert.Throws<ArgumentException>(() => ZCurve.Z85Decode("abc d"), "space is not Z85");
            Assert.Throws<ArgumentException>(() => ZCurve.Z85Encode(new byte[3]), "length not a multiple of 4");
            Assert.Throws<ArgumentException>(() => ZCurve.PublicKeyOf("short"), "short key");
        }

        [Test]
        static void CurveRequestReply()
        {
            string serverPub, serverSec, clientPub, clientSec, otherPub, otherSec;
            ZCurve.GenerateKeyPair(out serverPub, out serverSec);
            ZCurve.GenerateKeyPair(out clientPub, out clientSec);
            ZCurve.GenerateKeyPair(out otherPub, out otherSec);
            using (var ctx = new ZContext())
            using (var rep = new ZSocket(ctx, ZSocketType.REP))
            {
                rep.CurveServer = true;
                rep.CurveSecretKey = Util.Bytes(serverSec);
                Assert.True(rep.CurveServer, "curve server");
                rep.Bind("tcp://127.0.0.1:*");
                string ep = rep.LastEndpoint;
                using (var req = new ZSocket(ctx, ZSocketType.REQ))
                {
                    req.CurveServerKey = Util.Bytes(serverPub);
                    req.CurvePublicKey = Util.Bytes(clientPub);
                    req.CurveSecretKey = Util.Bytes(clientSec);
                    Assert.Equal(serverPub, ZCurve.Z85Encode(req.CurveServerKey), "server key read back");
                    req.ReceiveTimeout = rep.ReceiveTimeout = Util.Deadline;
                    req.Connect(ep);
                    req.SendString("open serial port /dev/ttyS1 9600");
                    string got = rep.ReceiveString();
                    rep.SendString(PatternTests.DeviceReply(got));
                    Assert.Equal("ok serial /dev/ttyS1 opened at 9600 baud", req.ReceiveString(), "encrypted round trip");
                }
                using (var wrong = new ZSocket(ctx, ZSocketType.REQ))
                using (var mon = ZMonitor.Create(wrong))
                {
                    wrong.CurveServerKey = Util.Bytes(otherPub); // not the server's key
                    wrong.CurvePublicKey = Util.Bytes(clientPub);
                    wrong.CurveSecretKey = Util.Bytes(clientSec);
                    wrong.Linger = TimeSpan.Zero;
                    wrong.Connect(ep);
                    wrong.SendString("play audio intruder.wav");
                    Assert.True(mon.WaitFor(ZMonitorEvents.HandshakeFailedProtocol | ZMonitorEvents.HandshakeFailedNoDetail
                                            | ZMonitorEvents.Disconnected | ZMonitorEvents.HandshakeFailedAuth, Util.Deadline) != null,
                                "the handshake with the wrong server key fails");
                    Assert.True(!rep.PollIn(TimeSpan.FromMilliseconds(100)), "nothing reached the server");
                }
                Assert.Throws<ZException>(() => rep.CurveSecretKey = new byte[5], "a key of the wrong length");
            }
        }
    }
}
