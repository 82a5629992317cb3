package oxmqtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The JeroMQ API's setters for tls:// and wss:// (setWssKeyPem, ...; JeroMQ itself has no such
 * transports): mutual TLS over loopback with certificates made by the openssl CLI, a client
 * expecting another host name gets nothing through, and bad PEM is a ZMQException.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TlsTest {
    @TempDir
    Path dir;

    private void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "openssl finishes");
        assertEquals(0, p.exitValue(), out);
    }

    private String pem(String name) throws IOException {
        return Files.readString(dir.resolve(name));
    }

    /** ca.pem; server.pem/.key for IP:127.0.0.1 and DNS:localhost; client.pem/.key. */
    private void certificates() throws IOException, InterruptedException {
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=Test CA", "-keyout", "ca.key", "-out", "ca.pem");
        Files.writeString(dir.resolve("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        Files.writeString(dir.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
        for (String n : new String[] {"server", "client"}) {
            openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/O=oxmq tests/CN=" + n,
                    "-keyout", n + ".key", "-out", n + ".csr");
            openssl("x509", "-req", "-in", n + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                    "-extfile", n + ".ext", "-out", n + ".pem");
        }
    }

    /** A PUSH trusting Test CA, presenting the client certificate, expecting {@code hostname}. */
    private ZMQ.Socket client(ZContext ctx, String hostname) throws IOException {
        ZMQ.Socket s = ctx.createSocket(SocketType.PUSH);
        s.setLinger(0);
        s.setWssTrustPem(pem("ca.pem"));
        s.setWssCertPem(pem("client.pem"));
        s.setWssKeyPem(pem("client.key"));
        s.setWssHostname(hostname);
        return s;
    }

    @Test
    void mutualTlsThroughTheJeroMQApi() throws Exception {
        certificates();
        try (ZContext ctx = new ZContext()) {
            ZMQ.Socket pull = ctx.createSocket(SocketType.PULL);
            assertTrue(pull.setWssCertPem(pem("server.pem")));
            assertTrue(pull.setWssKeyPem(pem("server.key")));
            assertTrue(pull.setWssTrustPem(pem("ca.pem")));
            pull.setReceiveTimeOut(15_000);
            assertTrue(pull.bind("tls://127.0.0.1:*"));
            String ep = pull.getLastEndpoint();
            ZMQ.Socket push = client(ctx, "localhost");
            assertTrue(push.connect(ep));
            assertTrue(push.send("over tls"));
            assertEquals("over tls", pull.recvStr());
            try (io.oxmq.Frame f = new io.oxmq.Frame()) {
                push.send("who");
                assertTrue(pull.oxmqSocket().recv(f, 0));
                assertEquals("CN=client,O=oxmq tests", f.property("TLS-Peer-Subject"));
            }

            // The same over wss://, the path in the endpoint.
            ZMQ.Socket rep = ctx.createSocket(SocketType.REP);
            rep.setWssCertPem(pem("server.pem"));
            rep.setWssKeyPem(pem("server.key"));
            rep.setReceiveTimeOut(15_000);
            rep.bind("wss://127.0.0.1:*/x");
            String wep = rep.getLastEndpoint();
            assertTrue(wep.startsWith("wss://127.0.0.1:") && wep.endsWith("/x"), wep);
            ZMQ.Socket req = ctx.createSocket(SocketType.REQ);
            req.setLinger(0);
            req.setWssTrustPem(pem("ca.pem"));
            req.setReceiveTimeOut(15_000);
            req.connect(wep);
            req.send("ping");
            assertEquals("ping", rep.recvStr());
            rep.send("pong");
            assertEquals("pong", req.recvStr());

            // A client expecting another name refuses the server: nothing arrives.
            ZMQ.Socket wrong = client(ctx, "other.example");
            wrong.connect(ep);
            wrong.send("never", ZMQ.DONTWAIT); // EAGAIN once the refused session ended its pipe
            pull.setReceiveTimeOut(500);
            assertNull(pull.recvStr(), "nothing from a client that refused the server");
            assertEquals(ZMQ.Error.EAGAIN.getCode(), pull.errno());

            ZMQException e = assertThrows(ZMQException.class, () -> push.setWssTrustPem("not a certificate"));
            assertEquals(ZMQ.Error.EINVAL.getCode(), e.getErrorCode());
        }
    }
}
