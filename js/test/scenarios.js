// Client scenarios run both under Node (node.test.js) and inside Chromium (browser.test.js):
// each takes the package's module and a context, drives sockets against the peers it declares,
// and throws on any failure. Plain JavaScript with no Node APIs, so a page can import it.
//
// A scenario declares `peers(keys)`: for each peer, the arguments of `zws-peer TYPE ...` (see
// peer/zws-peer.c); the harness starts them and gives their endpoints in ctx.endpoints. Through
// ctx.harness(op, ...) a scenario reads what a peer received ("lines", i: its RECV lines, each
// an array of frames as text), waits for it ("waitLines", i, n), or restarts it ("restart", i).
// `mechanism` is the one it uses: a browser can use PLAIN and CURVE only against oxmq's servers,
// which take the browser-safe protocol names (browser.test.js runs them there).

const decoder = new TextDecoder();
const text = (bytes) => decoder.decode(bytes);
const texts = (frames) => frames.map(text);

function expect(condition, message) {
  if (!condition) throw new Error(message);
}

function expectEqual(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: got ${a}, expected ${e}`);
}

/** Resolves with the first event of one of the types; rejects after ms. */
function nextEvent(sock, types, ms = 10000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sock.events.off("*", listener);
      reject(new Error(`no ${types.join("/")} event within ${ms} ms`));
    }, ms);
    const listener = (event) => {
      if (!types.includes(event.type)) return;
      clearTimeout(timer);
      sock.events.off("*", listener);
      resolve(event);
    };
    sock.events.on("*", listener);
  });
}

async function expectError(promise, code, what) {
  try {
    await promise;
  } catch (error) {
    expectEqual(error.code, code, `${what}: error code`);
    return error;
  }
  throw new Error(`${what}: expected ${code}, got success`);
}

function bytes(n, seed) {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const opts = { receiveTimeout: 10000, sendTimeout: 10000 };

export const scenarios = {
  reqToRep: {
    mechanism: "NULL",
    peers: () => [["rep"]],
    async run(zws, ctx) {
      const req = new zws.Req(opts);
      req.connect(ctx.endpoints[0]);
      for (let i = 0; i < 5; i++) {
        await req.send([`hello ${i}`, "second frame"]);
        expectEqual(texts(await req.receive()), [`hello ${i}`, "second frame"], "reply");
      }
      await expectError(req.send("again").then(() => req.send("twice")), "EFSM", "REQ sending twice");
      req.close();
      await ctx.harness("waitLines", 0, 5);
      const lines = await ctx.harness("lines", 0);
      expectEqual(lines[0], ["hello 0", "second frame"], "what the REP peer received");
    },
  },

  reqToRouter: {
    mechanism: "NULL",
    peers: () => [["router"]],
    async run(zws, ctx) {
      const req = new zws.Request({ ...opts, routingId: "client-7" });
      req.connect(ctx.endpoints[0]);
      await req.send("via router");
      expectEqual(texts(await req.receive()), ["via router"], "reply through ROUTER");
      req.close();
      await ctx.harness("waitLines", 0, 1);
      // The ROUTER saw our routing id, the empty delimiter and the body.
      expectEqual((await ctx.harness("lines", 0))[0], ["client-7", "", "via router"], "ROUTER's view of the request");
    },
  },

  reqLoadBalances: {
    mechanism: "NULL",
    peers: () => [["rep"], ["rep"]],
    async run(zws, ctx) {
      const req = new zws.Req(opts);
      for (const endpoint of ctx.endpoints) req.connect(endpoint);
      for (let i = 0; i < 6; i++) {
        await req.send(`r${i}`);
        expectEqual(texts(await req.receive()), [`r${i}`], "reply");
      }
      req.close();
      await ctx.harness("waitLines", 0, 3);
      await ctx.harness("waitLines", 1, 3);
      const a = await ctx.harness("lines", 0);
      const b = await ctx.harness("lines", 1);
      expectEqual([a.length, b.length], [3, 3], "requests per REP peer (round-robin)");
    },
  },

  dealerEcho: {
    mechanism: "NULL",
    peers: () => [["dealer"]],
    async run(zws, ctx) {
      const dealer = new zws.Dealer(opts);
      dealer.connect(ctx.endpoints[0]);
      // ctx.bigFrame: Chromium sends a message above ~128 KiB as continuation frames, which
      // libzmq 4.3.5's ws engine refuses (oxmq reassembles them), so the browser run against
      // libzmq uses a smaller one.
      const big = bytes(ctx.bigFrame ?? 300000, 7);
      await dealer.send(["", "empty first frame", new Uint8Array([0, 1, 2, 255])]);
      await dealer.send([big, bytes(200, 3)]);
      await dealer.send(null);
      const first = await dealer.receive();
      expectEqual(texts(first.slice(0, 2)), ["", "empty first frame"], "frames");
      expect(sameBytes(first[2], new Uint8Array([0, 1, 2, 255])), "binary frame came back unchanged");
      const second = await dealer.receive();
      expect(sameBytes(second[0], big) && sameBytes(second[1], bytes(200, 3)), `${big.length}-byte frame came back unchanged`);
      expectEqual(texts(await dealer.receive()), [""], "an empty message");
      dealer.close();
    },
  },

  routerToDealers: {
    mechanism: "NULL",
    peers: () => [["dealer", "--routing-id", "alpha"], ["dealer", "--routing-id", "beta"]],
    async run(zws, ctx) {
      const router = new zws.Router(opts);
      const ready = new Promise((resolve) => {
        let n = 0;
        router.events.on("handshake", () => ++n === 2 && resolve());
      });
      for (const endpoint of ctx.endpoints) router.connect(endpoint);
      await ready;
      await router.send(["beta", "to beta"]);
      await router.send(["alpha", "to alpha"]);
      const replies = [texts(await router.receive()), texts(await router.receive())].sort();
      expectEqual(replies, [["alpha", "to alpha"], ["beta", "to beta"]], "echoes with the peers' routing ids");
      const before = router.dropped;
      await router.send(["nobody", "lost"]);
      expectEqual(router.dropped, before + 1, "a message to an unknown routing id is dropped and counted");
      router.mandatory = true;
      await expectError(router.send(["nobody", "x"]), "EHOSTUNREACH", "mandatory ROUTER to an unknown id");
      router.close();
    },
  },

  repServesReq: {
    mechanism: "NULL",
    peers: () => [["req", "--count", "4"]],
    async run(zws, ctx) {
      const rep = new zws.Rep(opts);
      rep.connect(ctx.endpoints[0]);
      await expectError(rep.send("unasked"), "EFSM", "REP replying before a request");
      for (let i = 0; i < 4; i++) {
        const [request] = await rep.receive();
        expectEqual(text(request), `req ${i}`, "request");
        await rep.send(["re: " + text(request), "ok"]);
      }
      await ctx.harness("waitLines", 0, 4);
      expectEqual(await ctx.harness("lines", 0), [0, 1, 2, 3].map((i) => [`re: req ${i}`, "ok"]), "replies the REQ peer got");
      rep.close();
    },
  },

  subFilters: {
    mechanism: "NULL",
    peers: () => [["pub"]],
    async run(zws, ctx) {
      const sub = new zws.Sub(opts);
      sub.connect(ctx.endpoints[0]);
      sub.subscribe("A");
      for (let i = 0; i < 5; i++) expect(text((await sub.receive())[0]).startsWith("A "), "only A while subscribed to A");
      sub.unsubscribe("A");
      sub.subscribe("sync");
      // Everything after the first "sync" was published after the CANCEL of A reached the PUB.
      let seen = 0;
      for (;;) {
        const topic = text((await sub.receive())[0]);
        if (topic.startsWith("sync")) seen++;
        else expect(seen === 0, `got ${topic} after the A subscription was cancelled`);
        if (seen === 20) break;
      }
      sub.close();
    },
  },

  pubToSub: {
    mechanism: "NULL",
    peers: () => [["sub", "--subscribe", "A"]],
    async run(zws, ctx) {
      const pub = new zws.Pub(opts);
      pub.connect(ctx.endpoints[0]);
      // Publish until the SUB peer has got five A messages; B is never subscribed.
      let i = 0;
      for (const deadline = Date.now() + 10000; Date.now() < deadline; i++) {
        await pub.send(`B ${i}`);
        await pub.send(`A ${i}`);
        if (i % 10 === 0 && (await ctx.harness("lines", 0)).length >= 5) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      pub.close();
      const lines = await ctx.harness("lines", 0);
      expect(lines.length >= 5, `the SUB peer got ${lines.length} messages`);
      for (const [topic] of lines) expect(topic.startsWith("A "), `SUB peer got ${topic}`);
      await expectError(pub.receive(), "ENOTSUP", "PUB receive");
    },
  },

  pushRoundRobin: {
    mechanism: "NULL",
    peers: () => [["pull"], ["pull"]],
    async run(zws, ctx) {
      const push = new zws.Push(opts);
      for (const endpoint of ctx.endpoints) push.connect(endpoint);
      for (let i = 0; i < 20; i++) await push.send([`m${i}`, "tail"]);
      await ctx.harness("waitLines", 0, 10);
      await ctx.harness("waitLines", 1, 10);
      const a = (await ctx.harness("lines", 0)).map((l) => l[0]);
      const b = (await ctx.harness("lines", 1)).map((l) => l[0]);
      const even = [0, 2, 4, 6, 8, 10, 12, 14, 16, 18].map((i) => `m${i}`);
      const odd = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19].map((i) => `m${i}`);
      expectEqual([a, b].sort(), [even, odd].sort(), "messages per PULL peer");
      push.close();
    },
  },

  pullFairQueues: {
    mechanism: "NULL",
    peers: () => [["push", "--count", "5"], ["push", "--count", "5"]],
    async run(zws, ctx) {
      const pull = new zws.Pull(opts);
      for (const endpoint of ctx.endpoints) pull.connect(endpoint);
      const got = [];
      for (let i = 0; i < 10; i++) got.push(text((await pull.receive())[0]));
      expectEqual(got.sort(), ["0", "0", "1", "1", "2", "2", "3", "3", "4", "4"], "messages from both PUSH peers");
      await expectError(pull.send("x"), "ENOTSUP", "PULL send");
      pull.close();
    },
  },

  pairEcho: {
    mechanism: "NULL",
    peers: () => [["pair"]],
    async run(zws, ctx) {
      const pair = new zws.Pair(opts);
      pair.connect(ctx.endpoints[0]);
      let threw = null;
      try {
        pair.connect(ctx.endpoints[0]);
      } catch (error) {
        threw = error;
      }
      expectEqual(threw?.code, "EINVAL", "a second PAIR connect");
      await pair.send(["one", "two"]);
      expectEqual(texts(await pair.receive()), ["one", "two"], "echo");
      pair.close();
    },
  },

  iteratorAndClose: {
    mechanism: "NULL",
    peers: () => [["push", "--count", "3"]],
    async run(zws, ctx) {
      const pull = new zws.Pull();
      pull.connect(ctx.endpoints[0]);
      const got = [];
      for await (const [msg] of pull) {
        got.push(text(msg));
        if (got.length === 3) break;
      }
      expectEqual(got, ["0", "1", "2"], "for await");
      const pending = pull.receive();
      await expectError(pull.receive(), "EBUSY", "a second concurrent receive");
      pull.close();
      await expectError(pending, "ETERM", "a receive pending at close()");
      await expectError(pull.receive(), "ETERM", "receive after close()");
      const dealer = new zws.Dealer({ receiveTimeout: 30 });
      await expectError(dealer.receive(), "EAGAIN", "receive with no peer and a 30 ms timeout");
      dealer.close();
    },
  },

  pullBackpressure: {
    mechanism: "NULL",
    peers: () => [["push", "--count", "3000"]],
    async run(zws, ctx) {
      // A small receive HWM: under Node the connection pauses reading while 5 wait; nothing is lost.
      const pull = new zws.Pull({ ...opts, receiveHighWaterMark: 5 });
      pull.connect(ctx.endpoints[0]);
      for (let i = 0; i < 3000; i++) {
        expectEqual(text((await pull.receive())[0]), String(i), "message order");
        if (i % 500 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      pull.close();
    },
  },

  reconnect: {
    mechanism: "NULL",
    peers: () => [["dealer"]],
    async run(zws, ctx) {
      const dealer = new zws.Dealer({ ...opts, reconnectInterval: 20 });
      dealer.connect(ctx.endpoints[0]);
      await dealer.send("before");
      expectEqual(texts(await dealer.receive()), ["before"], "echo before the restart");
      const lost = nextEvent(dealer, ["disconnect"]);
      await ctx.harness("kill", 0);
      await lost;
      // Queued while disconnected; delivered once the connection is back.
      await dealer.send("while down");
      const back = nextEvent(dealer, ["handshake"]);
      await ctx.harness("restart", 0);
      await back;
      expectEqual(texts(await dealer.receive()), ["while down"], "echo after the restart");
      dealer.close();
    },
  },

  backoff: {
    mechanism: "NULL",
    peers: () => [],
    async run(zws, ctx) {
      // Nothing listens on the port of a peer that is gone: every attempt fails.
      const dealer = new zws.Dealer({ reconnectInterval: 10, reconnectMaxInterval: 80 });
      const intervals = [];
      const done = new Promise((resolve) =>
        dealer.events.on("connect:retry", (event) => {
          intervals.push(event.interval);
          if (intervals.length === 6) resolve();
        }),
      );
      dealer.connect(ctx.closedEndpoint);
      await done;
      dealer.close();
      const bases = [10, 20, 40, 80, 80, 80];
      intervals.forEach((interval, i) =>
        expect(interval >= bases[i] && interval < 2 * bases[i], `retry ${i} after ${interval} ms, expected [${bases[i]}, ${2 * bases[i]})`),
      );
    },
  },

  wss: {
    mechanism: "NULL",
    peers: (keys) => [["rep", "--wss", keys.tls.cert, keys.tls.key]],
    async run(zws, ctx) {
      // Node verifies against the test CA (tls.ca); Chromium trusts the server key's SPKI.
      const req = new zws.Req({ ...opts, tls: { ca: ctx.keys.tls.ca } });
      expect(ctx.endpoints[0].startsWith("wss://"), "a wss:// endpoint");
      req.connect(ctx.endpoints[0]);
      await req.send(["over", "tls"]);
      expectEqual(texts(await req.receive()), ["over", "tls"], "reply over wss");
      req.close();
    },
  },

  wssUntrusted: {
    mechanism: "NULL",
    nodeOnly: true,
    peers: (keys) => [["rep", "--wss", keys.tls.cert, keys.tls.key]],
    async run(zws, ctx) {
      // A certificate from a CA we do not trust: the WebSocket never opens, nothing is sent.
      const req = new zws.Req({ tls: { ca: ctx.keys.tls.otherCa } });
      const event = nextEvent(req, ["connect:error", "handshake"]);
      req.connect(ctx.endpoints[0]);
      const e = await event;
      req.close();
      expectEqual([e.type, e.error?.code], ["connect:error", "ECONNREFUSED"], "an untrusted certificate");
      expect(/certificate|self.signed|verify/i.test(e.error.message), `the reason names the certificate: ${e.error.message}`);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expectEqual((await ctx.harness("lines", 0)).length, 0, "messages the server got");
    },
  },

  plain: {
    mechanism: "PLAIN",
    peers: () => [["rep", "--plain", "admin:secret"]],
    async run(zws, ctx) {
      const req = new zws.Req({ ...opts, plainUsername: "admin", plainPassword: "secret" });
      req.connect(ctx.endpoints[0]);
      await req.send("over plain");
      expectEqual(texts(await req.receive()), ["over plain"], "reply");
      req.close();
      const wrong = new zws.Req({ plainUsername: "admin", plainPassword: "guess" });
      const refused = nextEvent(wrong, ["handshake:error:auth", "handshake"]);
      wrong.connect(ctx.endpoints[0]);
      const event = await refused;
      wrong.close();
      expectEqual([event.type, event.error?.code], ["handshake:error:auth", "EACCES"], "a wrong password");
    },
  },

  curve: {
    mechanism: "CURVE",
    peers: (keys) => [["dealer", "--curve", keys.server.secretKey, "--curve-client", keys.client.publicKey]],
    async run(zws, ctx) {
      const { server, client, other } = ctx.keys;
      const dealer = new zws.Dealer({ ...opts, curveServerKey: server.publicKey, curvePublicKey: client.publicKey, curveSecretKey: client.secretKey });
      dealer.connect(ctx.endpoints[0]);
      const big = bytes(100000, 5);
      for (let i = 0; i < 3; i++) await dealer.send([`boxed ${i}`, big]);
      for (let i = 0; i < 3; i++) {
        const [head, body] = await dealer.receive();
        expectEqual(text(head), `boxed ${i}`, "echo over CURVE");
        expect(sameBytes(body, big), "100 kB frame over CURVE unchanged");
      }
      dealer.close();
      // A client key the server's ZAP handler does not know: refused with an ERROR command.
      const stranger = new zws.Dealer({ curveServerKey: server.publicKey, curveSecretKey: other.secretKey });
      let event = nextEvent(stranger, ["handshake:error:auth", "handshake"]);
      stranger.connect(ctx.endpoints[0]);
      expectEqual([(await event).type, (await event).error?.code], ["handshake:error:auth", "EACCES"], "an unknown client key");
      stranger.close();
      // The wrong server key: the server cannot open HELLO and drops the connection.
      const lost = new zws.Dealer({ curveServerKey: other.publicKey });
      event = nextEvent(lost, ["handshake:error:protocol", "handshake:error:auth", "handshake"]);
      lost.connect(ctx.endpoints[0]);
      expect((await event).type !== "handshake", "a handshake with the wrong server key must fail");
      lost.close();
    },
  },

  bindRepForLibzmq: {
    mechanism: "NULL",
    nodeOnly: true,
    peers: () => [],
    async run(zws, ctx) {
      // Our REP binds; libzmq's REQ connects and sends three requests.
      const rep = new zws.Rep(opts);
      await rep.bind("ws://127.0.0.1:*/bound");
      expect(/^ws:\/\/127\.0\.0\.1:\d+\/bound$/.test(rep.lastEndpoint), `lastEndpoint ${rep.lastEndpoint}`);
      const peer = await ctx.harness("spawn", ["req", rep.lastEndpoint, "--connect", "--count", "3"]);
      for (let i = 0; i < 3; i++) {
        expectEqual(texts(await rep.receive()), [`req ${i}`], "request from libzmq");
        await rep.send(`ok ${i}`);
      }
      await ctx.harness("waitLines", peer, 3);
      expectEqual(await ctx.harness("lines", peer), [["ok 0"], ["ok 1"], ["ok 2"]], "replies libzmq got");
      rep.close();
    },
  },

  bindPlain: {
    mechanism: "PLAIN",
    nodeOnly: true,
    peers: () => [],
    async run(zws, ctx) {
      // Our REP binds as a PLAIN server; libzmq's REQ logs in, one of ours with a wrong password does not.
      const rep = new zws.Rep({ ...opts, plainServer: true, plainAuthenticate: (user, pass) => user === "alice" && pass === "s3cret" });
      const refusedHere = nextEvent(rep, ["handshake:error:auth"]);
      await rep.bind("ws://127.0.0.1:*/plain");
      const peer = await ctx.harness("spawn", ["req", rep.lastEndpoint, "--connect", "--plain-client", "alice:s3cret", "--count", "2"]);
      for (let i = 0; i < 2; i++) {
        expectEqual(texts(await rep.receive()), [`req ${i}`], "request from libzmq over PLAIN");
        await rep.send(`welcome ${i}`);
      }
      await ctx.harness("waitLines", peer, 2);
      expectEqual(await ctx.harness("lines", peer), [["welcome 0"], ["welcome 1"]], "replies libzmq got");
      const mallory = new zws.Req({ plainUsername: "alice", plainPassword: "guess" });
      const refusedThere = nextEvent(mallory, ["handshake:error:auth", "handshake"]);
      mallory.connect(rep.lastEndpoint);
      expectEqual([(await refusedThere).type, (await refusedThere).error?.code], ["handshake:error:auth", "EACCES"], "the client refused");
      expectEqual((await refusedHere).error?.code, "EACCES", "the server's event");
      mallory.close();
      // A NULL client cannot reach a PLAIN server: no protocol in common.
      const anon = new zws.Req();
      const failed = nextEvent(anon, ["connect:error", "handshake"]);
      anon.connect(rep.lastEndpoint);
      expectEqual((await failed).type, "connect:error", "a NULL client at a PLAIN server");
      anon.close();
      rep.close();
    },
  },

  bindCurve: {
    mechanism: "CURVE",
    nodeOnly: true,
    peers: () => [],
    async run(zws, ctx) {
      // Our ROUTER binds as a CURVE server; libzmq's REQ (a known client key) and our own DEALER connect.
      const { server, client, other } = ctx.keys;
      const seen = [];
      const router = new zws.Router({
        ...opts,
        curveServer: true,
        curveSecretKey: server.secretKey,
        curveAuthenticate: (key) => (seen.push(key), key === client.publicKey),
      });
      await router.bind("ws://127.0.0.1:*/curve");
      const peer = await ctx.harness("spawn", ["req", router.lastEndpoint, "--connect", "--curve-to", server.publicKey, client.publicKey, client.secretKey, "--count", "2"]);
      for (let i = 0; i < 2; i++) {
        const [id, empty, body] = await router.receive();
        expectEqual([empty.length, text(body)], [0, `req ${i}`], "REQ envelope and request over CURVE");
        await router.send([id, "", `boxed ${i}`]);
      }
      await ctx.harness("waitLines", peer, 2);
      expectEqual(await ctx.harness("lines", peer), [["boxed 0"], ["boxed 1"]], "replies libzmq opened");
      // Our client, the same key: multipart both ways.
      const mine = new zws.Dealer({ ...opts, curveServerKey: server.publicKey, curvePublicKey: client.publicKey, curveSecretKey: client.secretKey });
      mine.connect(router.lastEndpoint);
      const big = bytes(70000, 9);
      await mine.send(["ours", big]);
      const [, head, got] = await router.receive();
      expectEqual(text(head), "ours", "first frame");
      expect(sameBytes(got, big), "70 kB over our CURVE both ends");
      mine.close();
      // An unknown key: refused with ERROR (EACCES on the client).
      const stranger = new zws.Dealer({ curveServerKey: server.publicKey, curveSecretKey: other.secretKey });
      const refused = nextEvent(stranger, ["handshake:error:auth", "handshake"]);
      stranger.connect(router.lastEndpoint);
      expectEqual([(await refused).type, (await refused).error?.code], ["handshake:error:auth", "EACCES"], "an unknown client key");
      stranger.close();
      expect(seen.includes(client.publicKey) && seen.includes(other.publicKey), "the authenticator saw both keys");
      router.close();
    },
  },

  bindWss: {
    mechanism: "NULL",
    nodeOnly: true,
    peers: () => [],
    async run(zws, ctx) {
      const { certPem, keyPem, ca, otherCa } = ctx.keys.tls;
      const rep = new zws.Rep({ ...opts, tls: { cert: certPem, key: keyPem } });
      await rep.bind("wss://127.0.0.1:*/secure");
      const req = new zws.Req({ ...opts, tls: { ca } });
      req.connect(rep.lastEndpoint);
      await req.send("over our own wss");
      expectEqual(texts(await rep.receive()), ["over our own wss"], "request over wss");
      await rep.send("ok");
      expectEqual(texts(await req.receive()), ["ok"], "reply over wss");
      req.close();
      const stranger = new zws.Req({ tls: { ca: otherCa } });
      const event = nextEvent(stranger, ["connect:error", "handshake"]);
      stranger.connect(rep.lastEndpoint);
      expectEqual((await event).type, "connect:error", "a client that does not trust the server's CA");
      stranger.close();
      rep.close();
      await expectError(new zws.Rep().bind("wss://127.0.0.1:*/x"), "EINVAL", "a wss bind without key and cert");
    },
  },

  bindPubAndRouter: {
    mechanism: "NULL",
    nodeOnly: true,
    peers: () => [],
    async run(zws, ctx) {
      // Our PUB binds; a libzmq SUB (topic A) and one of ours (topic B) connect.
      const pub = new zws.Pub();
      await pub.bind("ws://127.0.0.1:*/pub");
      const peer = await ctx.harness("spawn", ["sub", pub.lastEndpoint, "--connect", "--subscribe", "A"]);
      const sub = new zws.Sub(opts);
      sub.connect(pub.lastEndpoint);
      sub.subscribe("B");
      let got = null;
      const receiving = sub.receive().then((m) => (got = texts(m)));
      for (let i = 0; got === null || (await ctx.harness("lines", peer)).length < 3; i++) {
        await pub.send([`A ${i}`]);
        await pub.send([`B ${i}`]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (i > 2000) throw new Error("subscribers never got anything");
      }
      await receiving;
      expect(got[0].startsWith("B "), `our SUB got ${got}`);
      for (const [topic] of await ctx.harness("lines", peer)) expect(topic.startsWith("A "), `libzmq's SUB got ${topic}`);
      sub.close();
      pub.close();

      // Our ROUTER binds; two DEALERs of ours connect with routing ids.
      const router = new zws.Router(opts);
      await router.bind("ws://127.0.0.1:*/router");
      const dealers = ["d1", "d2"].map((id) => {
        const d = new zws.Dealer({ ...opts, routingId: id });
        d.connect(router.lastEndpoint);
        return d;
      });
      await dealers[0].send("from d1");
      await dealers[1].send("from d2");
      const seen = [texts(await router.receive()), texts(await router.receive())].sort();
      expectEqual(seen, [["d1", "from d1"], ["d2", "from d2"]], "ROUTER's view");
      await router.send(["d2", "back to d2"]);
      expectEqual(texts(await dealers[1].receive()), ["back to d2"], "routed reply");
      dealers.forEach((d) => d.close());
      router.close();

      // A bound PAIR takes one peer; a second is turned away and keeps retrying.
      const pair = new zws.Pair(opts);
      const accepted = [];
      pair.events.on("accept", (e) => accepted.push(e.address));
      await pair.bind("ws://127.0.0.1:*/pair");
      const first = new zws.Pair(opts);
      first.connect(pair.lastEndpoint);
      await first.send("first");
      expectEqual(texts(await pair.receive()), ["first"], "the first PAIR peer");
      const second = new zws.Pair({ ...opts, reconnectInterval: 20 });
      const refused = nextEvent(second, ["handshake:error:protocol", "connect:error", "handshake"]);
      second.connect(pair.lastEndpoint);
      expect((await refused).type !== "handshake", "a second PAIR peer must not get through");
      await pair.send("still first");
      expectEqual(texts(await first.receive()), ["still first"], "the first peer keeps the PAIR");
      expectEqual(accepted.length, 1, "accept events");
      [first, second, pair].forEach((s) => s.close());
    },
  },

  curveSubscriber: {
    mechanism: "CURVE",
    peers: (keys) => [["pub", "--curve", keys.server.secretKey]],
    async run(zws, ctx) {
      // The subscription goes inside a CURVE MESSAGE box; libzmq's PUB filters on it.
      const sub = new zws.Sub({ ...opts, curveServerKey: ctx.keys.server.publicKey });
      sub.connect(ctx.endpoints[0]);
      sub.subscribe("B");
      for (let i = 0; i < 5; i++) expect(text((await sub.receive())[0]).startsWith("B "), "only B over CURVE");
      sub.close();
    },
  },

  plainPubToSub: {
    mechanism: "PLAIN",
    peers: () => [["sub", "--plain", "u:p", "--subscribe", "A"]],
    async run(zws, ctx) {
      const pub = new zws.Pub({ plainUsername: "u", plainPassword: "p" });
      pub.connect(ctx.endpoints[0]);
      for (let i = 0; (await ctx.harness("lines", 0)).length < 3; i++) {
        await pub.send(`B ${i}`);
        await pub.send(`A ${i}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (i > 2000) throw new Error("the SUB peer got nothing");
      }
      for (const [topic] of await ctx.harness("lines", 0)) expect(topic.startsWith("A "), `SUB peer got ${topic}`);
      pub.close();
    },
  },

  curvePubToSub: {
    mechanism: "CURVE",
    peers: (keys) => [["sub", "--curve", keys.server.secretKey, "--subscribe", "A"]],
    async run(zws, ctx) {
      // libzmq's SUB sends its subscription over CURVE as a SUBSCRIBE command inside the box.
      const pub = new zws.Pub({ curveServerKey: ctx.keys.server.publicKey });
      pub.connect(ctx.endpoints[0]);
      for (let i = 0; (await ctx.harness("lines", 0)).length < 3; i++) {
        await pub.send(`B ${i}`);
        await pub.send(`A ${i}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (i > 2000) throw new Error("the SUB peer got nothing");
      }
      for (const [topic] of await ctx.harness("lines", 0)) expect(topic.startsWith("A "), `SUB peer got ${topic}`);
      pub.close();
    },
  },

  browserCannotBind: {
    mechanism: "NULL",
    browserOnly: true,
    peers: () => [],
    async run(zws) {
      await expectError(new zws.Rep().bind("ws://127.0.0.1:*/x"), "ENOTSUP", "bind() in a browser");
    },
  },
};
