// The package's pure parts, without a peer: Z85, framing, commands and metadata, the mechanisms'
// state machines, key derivation against libzmq's published key pairs, options and errors, and
// the Node WebSocket client against a hostile server that breaks RFC 6455.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as net from "node:net";
import { test } from "node:test";
import * as zws from "../dist/index.js";
import { NullMechanism, PlainClientMechanism, PlainServerMechanism, RefusedHandshake } from "../dist/mechanism.js";
import { decodeFrame, decodeProperties, encodeCommand, encodeProperties } from "../dist/wire.js";
import { CurveClientMechanism, CurveServerMechanism } from "../dist/curve.js";

const bytes = (...b) => new Uint8Array(b);
const ascii = (s) => new TextEncoder().encode(s);

test("z85: RFC 32's vector both ways, and bad input is EINVAL", () => {
  assert.equal(zws.z85Encode(bytes(0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b)), "HelloWorld");
  assert.deepEqual(zws.z85Decode("HelloWorld"), bytes(0x86, 0x4f, 0xd2, 0x6f, 0xb5, 0x59, 0xf7, 0x5b));
  assert.throws(() => zws.z85Decode("Hello~orld"), { code: "EINVAL" });
  assert.throws(() => zws.z85Decode("Hell"), { code: "EINVAL" });
  assert.throws(() => zws.z85Encode(bytes(1, 2, 3)), { code: "EINVAL" });
});

test("curve: public keys of the zmq_curve(7) key pairs match libzmq's zmq_curve_public", () => {
  assert.equal(zws.curvePublicKey("D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"), "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID");
  assert.equal(zws.curvePublicKey("JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"), "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7");
  const pair = zws.curveKeyPair();
  assert.equal(zws.curvePublicKey(pair.secretKey), pair.publicKey);
  assert.throws(() => zws.curvePublicKey("short"), { code: "EINVAL" });
});

test("wire: frames, commands and metadata round-trip; malformed ones are EPROTO", () => {
  assert.deepEqual(decodeFrame(bytes(1, 9, 8)), { flags: 1, body: bytes(9, 8) });
  assert.throws(() => decodeFrame(bytes()), { code: "EPROTO" });
  assert.throws(() => decodeFrame(bytes(0x04)), { code: "EPROTO" });
  assert.throws(() => decodeFrame(bytes(0x03)), { code: "EPROTO" });
  const props = new Map([["Socket-Type", ascii("DEALER")], ["Identity", bytes(1, 2)]]);
  const back = decodeProperties(encodeProperties(props));
  assert.deepEqual([...back.keys()], ["socket-type", "identity"]);
  assert.deepEqual(back.get("identity"), bytes(1, 2));
  assert.throws(() => decodeProperties(bytes(5, 65, 66)), { code: "EPROTO" });
  assert.throws(() => decodeProperties(bytes(1, 65, 0, 0, 0, 9, 1)), { code: "EPROTO" });
});

test("mechanisms: NULL and PLAIN handshakes, ERROR as EACCES, out-of-order commands as EPROTO", () => {
  const own = new Map([["Socket-Type", ascii("REQ")]]);
  const nul = new NullMechanism(own);
  assert.equal(nul.start().length, 1);
  const peer = nul.onCommand(encodeCommand("READY", encodeProperties(new Map([["Socket-Type", ascii("REP")]]))));
  assert.deepEqual(peer.peer.get("socket-type"), ascii("REP"));
  assert.throws(() => new NullMechanism(own).onCommand(encodeCommand("WELCOME")), { code: "EPROTO" });
  assert.throws(() => new NullMechanism(own).onCommand(encodeCommand("ERROR", bytes(3, 52, 48, 48))), { code: "EACCES" });

  const plain = new PlainClientMechanism(own, "user", "pw");
  assert.deepEqual(plain.start()[0], encodeCommand("HELLO", bytes(4, ...ascii("user"), 2, ...ascii("pw"))));
  assert.throws(() => new PlainClientMechanism(own, "u", "p").onCommand(encodeCommand("READY")), { code: "EPROTO" });
  const step = plain.onCommand(encodeCommand("WELCOME"));
  assert.equal(new TextDecoder().decode(step.send[0].subarray(1, 9)), "INITIATE");
  assert.ok(plain.onCommand(encodeCommand("READY", encodeProperties(new Map([["Socket-Type", ascii("REP")]])))).peer);
  // libzmq 4.3.5's malformed PLAIN ERROR ("^RROR", see mechanism.ts) is still a refusal.
  assert.throws(() => new PlainClientMechanism(own, "u", "p").onCommand(bytes(0x5e, ...ascii("RROR"), 3, ...ascii("400"))), {
    code: "EACCES",
    message: /400/,
  });
});

test("mechanisms: the PLAIN server takes HELLO, INITIATE; refuses with ERROR 400; malformed HELLO is EPROTO", () => {
  const own = new Map([["Socket-Type", ascii("REP")]]);
  const hello = (u, p) => encodeCommand("HELLO", bytes(u.length, ...ascii(u), p.length, ...ascii(p)));
  const ok = new PlainServerMechanism(own, (u, p) => u === "a" && p === "b");
  assert.deepEqual(ok.start(), []);
  assert.deepEqual(ok.onCommand(hello("a", "b")).send, [encodeCommand("WELCOME")]);
  const done = ok.onCommand(encodeCommand("INITIATE", encodeProperties(new Map([["Socket-Type", ascii("REQ")]]))));
  assert.deepEqual(done.send, [encodeCommand("READY", encodeProperties(own))]);
  assert.equal(new TextDecoder().decode(done.peer.get("user-id")), "a");
  assert.throws(
    () => new PlainServerMechanism(own, () => false).onCommand(hello("a", "x")),
    (e) => e instanceof RefusedHandshake && e.error.code === "EACCES" && new TextDecoder().decode(e.reply) === "\x05ERROR\x03400",
  );
  assert.throws(() => new PlainServerMechanism(own, undefined).onCommand(encodeCommand("HELLO", bytes(9, 1))), { code: "EPROTO" });
  assert.throws(() => new PlainServerMechanism(own, undefined).onCommand(encodeCommand("INITIATE")), { code: "EPROTO" });
  // Without an authenticator everyone is let in, as libzmq without a ZAP handler.
  assert.equal(new PlainServerMechanism(own, undefined).onCommand(hello("x", "y")).send.length, 1);
});

test("curve: client and server state machines in memory: handshake, messages both ways, tampering, a refused key", () => {
  const server = zws.curveKeyPair();
  const client = zws.curveKeyPair();
  const props = (type) => new Map([["Socket-Type", ascii(type)]]);
  const pair = (authenticate) => {
    const c = new CurveClientMechanism(props("DEALER"), { serverKey: server.publicKey, publicKey: client.publicKey, secretKey: client.secretKey });
    const s = new CurveServerMechanism(props("ROUTER"), server.secretKey, authenticate);
    const [hello] = c.start();
    assert.equal(hello.length, 200);
    const [welcome] = s.onCommand(hello).send;
    assert.equal(welcome.length, 168);
    const [initiate] = c.onCommand(welcome).send;
    return { c, s, initiate };
  };
  const { c, s, initiate } = pair((key) => key === client.publicKey);
  const atServer = s.onCommand(initiate);
  assert.equal(new TextDecoder().decode(atServer.peer.get("user-id")), client.publicKey);
  const atClient = c.onCommand(atServer.send[0]);
  assert.deepEqual(atClient.peer.get("socket-type"), ascii("ROUTER"));
  const boxed = c.encode({ flags: 1, body: ascii("hi") });
  assert.equal(boxed.flags, 0);
  assert.deepEqual(s.decode(boxed), { flags: 1, body: ascii("hi") });
  assert.throws(() => s.decode(boxed), { code: "EPROTO" }); // a replayed nonce
  const reply = s.encode({ flags: 0, body: ascii("yo") });
  reply.body[reply.body.length - 1] ^= 1;
  assert.throws(() => c.decode(reply), { code: "EPROTO" }); // a flipped bit
  const refused = pair(() => false);
  assert.throws(() => refused.s.onCommand(refused.initiate), (e) => e.error?.code === "EACCES");
  // A HELLO boxed for another server key does not open.
  const wrong = new CurveClientMechanism(props("DEALER"), { serverKey: zws.curveKeyPair().publicKey });
  assert.throws(() => new CurveServerMechanism(props("ROUTER"), server.secretKey, undefined).onCommand(wrong.start()[0]), { code: "EPROTO" });
});

test("options and errors: unknown options, bad endpoints, bad keys, wrong-direction calls", async () => {
  assert.throws(() => new zws.Dealer({ nonsense: 1 }), { code: "EINVAL" });
  const d = new zws.Dealer();
  assert.throws(() => d.connect("tcp://127.0.0.1:5555"), { code: "EINVAL" });
  assert.throws(() => d.connect("not a url"), { code: "EINVAL" });
  d.curveServerKey = "too short";
  assert.throws(() => d.connect("ws://127.0.0.1:9/"), { code: "EINVAL" });
  d.close();
  await assert.rejects(d.send("x"), (e) => e instanceof zws.TermError && e.code === "ETERM");
  await assert.rejects(new zws.Sub().send("x"), { code: "ENOTSUP" });
  await assert.rejects(new zws.Push().receive(), { code: "ENOTSUP" });
  assert.throws(() => new zws.Dealer({ routingId: bytes(0, 1) }).mechanism(), { code: "EINVAL" });
  const r = new zws.Req({ receiveTimeout: 0 });
  await assert.rejects(r.receive(), (e) => e instanceof zws.StateError && e.code === "EFSM");
  r.close();
});

/** A server that completes the upgrade for "ZWS2.0/NULL" and then sends `bytes` raw. */
async function hostile(payload, { accept } = {}) {
  const server = net.createServer((socket) => {
    let buf = "";
    socket.on("data", (d) => {
      buf += d.toString("latin1");
      if (!buf.includes("\r\n\r\n")) return;
      const key = /Sec-WebSocket-Key: (.*)\r\n/.exec(buf)[1];
      const ok = accept ?? createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${ok}\r\nSec-WebSocket-Protocol: ZWS2.0/NULL\r\n\r\n`);
      socket.write(Buffer.from(payload));
      buf = "";
      socket.removeAllListeners("data");
      socket.on("data", () => {});
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const dealer = new zws.Dealer({ reconnectInterval: -1 });
  const event = new Promise((resolve) => dealer.events.on("*", (e) => e.type !== "connect:retry" && resolve(e)));
  dealer.connect(`ws://127.0.0.1:${server.address().port}/`);
  const e = await event;
  dealer.close();
  server.close();
  return e;
}


test("node websocket client: hostile servers are refused as protocol or connect errors", async () => {
  // A masked frame from a server (RFC 6455 5.1).
  assert.equal((await hostile([0x82, 0x81, 1, 2, 3, 4, 5])).type, "handshake:error:protocol");
  // A fragmented ping, and an oversized close.
  assert.equal((await hostile([0x09, 0])).type, "handshake:error:protocol");
  assert.equal((await hostile([0x88, 126, 0, 126, ...new Array(126).fill(0)])).type, "handshake:error:protocol");
  // A text message.
  assert.equal((await hostile([0x81, 1, 0x41])).type, "handshake:error:protocol");
  // A READY from a peer without a socket type.
  const e = await hostile([0x82, 7, 0x02, 5, ...ascii("READY")]);
  assert.equal(e.type, "handshake:error:protocol");
  assert.match(e.error.message, /cannot talk to a peer without a Socket-Type/);
  // A wrong Sec-WebSocket-Accept: the WebSocket never opens.
  const bad = await hostile([], { accept: "d3Jvbmc=" });
  assert.deepEqual([bad.type, bad.error.code], ["connect:error", "ECONNREFUSED"]);
});

/** Sends raw bytes to a bound address; resolves with what came back before the server closed. */
function raw(port, request, after = null) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(request));
    let got = Buffer.alloc(0);
    let sentAfter = false;
    socket.on("data", (d) => {
      got = Buffer.concat([got, d]);
      if (after && !sentAfter && got.includes("\r\n\r\n")) {
        sentAfter = true;
        socket.write(Buffer.from(after));
      }
    });
    socket.on("close", () => resolve(got.toString("latin1")));
    socket.on("error", reject);
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open; it sent ${JSON.stringify(got.toString("latin1").slice(0, 80))}`));
    }, 5000);
  });
}

test("bind: bad upgrades get 400/404/426/431 and an unmasked client frame ends the connection", async () => {
  const rep = new zws.Rep();
  await rep.bind("ws://127.0.0.1:*/zws");
  const port = Number(new URL(rep.lastEndpoint).port);
  const upgrade = (lines) => `GET /zws HTTP/1.1\r\nHost: x\r\n${lines.join("\r\n")}\r\n\r\n`;
  const good = ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="];
  assert.match(await raw(port, upgrade([...good.slice(0, 3), "Sec-WebSocket-Key: c2hvcnQ=", "Sec-WebSocket-Protocol: ZWS2.0/NULL"])), /^HTTP\/1.1 400/);
  assert.match(await raw(port, upgrade([...good, "Sec-WebSocket-Protocol: ZWS2.0/PLAIN"])), /^HTTP\/1.1 400/);
  assert.match(await raw(port, upgrade([...good.slice(1), "Sec-WebSocket-Protocol: ZWS2.0/NULL"])), /^HTTP\/1.1 426/); // no Upgrade header
  assert.match(await raw(port, upgrade([...good.slice(0, 2), "Sec-WebSocket-Version: 8", good[3], "Sec-WebSocket-Protocol: ZWS2.0/NULL"])), /^HTTP\/1.1 400/);
  assert.match(await raw(port, upgrade([...good, "Sec-WebSocket-Protocol: ZWS2.0/NULL"]).replace("/zws", "/other")), /^HTTP\/1.1 404/);
  assert.match(await raw(port, upgrade([...good, `X-Big: ${"a".repeat(20000)}`, "Sec-WebSocket-Protocol: ZWS2.0/NULL"])), /^HTTP\/1.1 431/);
  // A proper upgrade, then an unmasked frame (RFC 6455 5.1: the server must close).
  const reply = await raw(port, upgrade([...good, "Sec-WebSocket-Protocol: ZWS2.0/NULL"]), [0x82, 2, 0x00, 0x41]);
  assert.match(reply, /^HTTP\/1.1 101 Switching Protocols\r\n/);
  assert.match(reply, /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/); // RFC 6455's example key
  // The socket still works for a well-behaved client afterwards.
  const req = new zws.Req({ receiveTimeout: 5000 });
  req.connect(rep.lastEndpoint);
  await req.send("still serving");
  const [q] = await rep.receive();
  await rep.send(q);
  assert.equal(new TextDecoder().decode((await req.receive())[0]), "still serving");
  req.close();
  rep.close();
});
