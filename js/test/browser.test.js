// The scenarios (scenarios.js) inside a real headless Chromium (Debian's, driven by
// playwright-core; CHROMIUM overrides its path), against the same zws-peer servers as the Node
// tests. The page loads the package's dist/ as native ES modules through an import map, so what
// runs is what a browser app gets. Browsers cannot offer RFC 45's names ("ZWS2.0/NULL"): the page
// offers the browser-safe "ZWS2.0-NULL" and bare "ZWS2.0" for NULL, which libzmq takes as bare
// ZWS2.0, and "ZWS2.0-PLAIN"/"ZWS2.0-CURVE", which only oxmq takes. So against libzmq the NULL
// scenarios run; against oxmq (ZWS_PEER_LIBRARY_PATH names its library) PLAIN and CURVE too.
// For wss://, Chromium trusts exactly the test server's key (its SPKI hash in
// --ignore-certificate-errors-spki-list; without it the page gets ERR_CERT_AUTHORITY_INVALID).
// Chromium sends a message above about 128 KiB as several WebSocket frames (120,000 bytes went
// as one, 131,000 did not) and libzmq 4.3.5 drops a connection that fragments, so the
// large-frame scenario uses 100,000 bytes against libzmq and 1,000,000 against oxmq, which
// reassembles them (ZWS_BROWSER_BIG_FRAME sets it).
import { after, before, test } from "node:test";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as zws from "../dist/index.js";
import { importMap, launchChromium, staticServer } from "./chromium.js";
import { makeKeys, peerBinary, setUp } from "./harness.js";
import { scenarios } from "./scenarios.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

let server;
let browser;
let page;
let base;
let harness = null;
const keys = makeKeys(zws);
const againstOxmq = Boolean(process.env.ZWS_PEER_LIBRARY_PATH);
const bigFrame = Number(process.env.ZWS_BROWSER_BIG_FRAME || (againstOxmq ? 1000000 : 100000));

before(async () => {
  peerBinary();
  server = staticServer(root);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium([`--ignore-certificate-errors-spki-list=${keys.tls.spki}`]);
  page = await browser.newPage();
  page.on("console", (msg) => process.stderr.write(`[chromium] ${msg.text()}\n`));
  await page.exposeFunction("zwsHarness", (op, ...args) => harness(op, ...args));
  await page.route(`${base}/`, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: `<!doctype html><script type="importmap">${JSON.stringify(importMap)}</script><title>zws tests</title>`,
    }),
  );
  await page.goto(`${base}/`);
});

after(async () => {
  await browser?.close();
  server?.close();
});

test("chromium: refuses RFC 45's subprotocol names and takes the browser-safe ones", async () => {
  const tried = await page.evaluate(() =>
    ["ZWS2.0/NULL", "ZWS2.0-NULL", "ZWS2.0-PLAIN", "ZWS2.0-CURVE"].map((name) => {
      try {
        new WebSocket("ws://127.0.0.1:9/", [name]).close();
        return "accepted";
      } catch (error) {
        return `${error.name}`;
      }
    }),
  );
  if (JSON.stringify(tried) !== JSON.stringify(["SyntaxError", "accepted", "accepted", "accepted"])) {
    throw new Error(`Chromium's WebSocket constructor: ${JSON.stringify(tried)}`);
  }
});

// The page's own WebSocket speaking ZWS 2.0 by hand, no package: a REP peer (an echo) answers
// a request sent as RFC 45's frames. Bare "ZWS2.0" against every server (each side's first
// message its routing id); "ZWS2.0-NULL" against oxmq (ZMTP 3.0's NULL READY both ways).
for (const protocol of ["ZWS2.0", ...(againstOxmq ? ["ZWS2.0-NULL"] : [])]) {
  test(`chromium: a page's own WebSocket speaks ${protocol} by hand to a REP`, { timeout: 30000 }, async () => {
    const setup = await setUp({ peers: () => [["rep"]] }, keys);
    try {
      await page.goto(`${base}/`);
      const got = await page.evaluate(
        async ({ endpoint, protocol }) => {
          const text = new TextEncoder();
          const frame = (flags, body) => new Uint8Array([flags, ...text.encode(body)]);
          const ws = new WebSocket(endpoint, [protocol]);
          ws.binaryType = "arraybuffer";
          const frames = [];
          let wake = null;
          ws.onmessage = (e) => {
            frames.push(new Uint8Array(e.data));
            wake?.();
          };
          const next = async () => {
            const deadline = Date.now() + 10000;
            while (frames.length === 0) {
              if (Date.now() > deadline) throw new Error(`no frame within 10 s (protocol ${ws.protocol})`);
              await new Promise((resolve) => {
                wake = resolve;
                setTimeout(resolve, 100);
              });
            }
            return frames.shift();
          };
          await new Promise((resolve, reject) => {
            ws.onopen = resolve;
            ws.onerror = () => reject(new Error("the WebSocket did not open"));
          });
          if (protocol === "ZWS2.0") {
            ws.send(frame(0x00, "")); // our (empty) routing id
            await next(); // the server's routing id
          } else {
            // NULL's READY: a command message (flags 0x02) naming our socket type.
            const props = [...text.encode("\x05READY\x0bSocket-Type"), 0, 0, 0, 3, ...text.encode("REQ")];
            ws.send(new Uint8Array([0x02, ...props]));
            const ready = await next();
            if (ready[0] !== 0x02 || new TextDecoder().decode(ready.slice(2, 7)) !== "READY") throw new Error(`not a READY: ${ready}`);
          }
          ws.send(frame(0x01, "")); // the empty delimiter, MORE
          ws.send(frame(0x00, "by hand"));
          const reply = [await next(), await next()];
          ws.close();
          return { protocol: ws.protocol, reply: reply.map((f) => [f[0], new TextDecoder().decode(f.slice(1))]) };
        },
        { endpoint: setup.context.endpoints[0], protocol },
      );
      const want = { protocol, reply: [[1, ""], [0, "by hand"]] };
      if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`got ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    } finally {
      await setup.stop();
    }
  });
}

for (const [name, scenario] of Object.entries(scenarios)) {
  if ((scenario.mechanism !== "NULL" && !againstOxmq) || scenario.nodeOnly) continue;
  test(`chromium: ${name}`, { timeout: 30000 }, async () => {
    const setup = await setUp(scenario, keys);
    harness = setup.harness;
    await page.goto(`${base}/`); // a fresh page: nothing left over from the previous scenario
    try {
      await page.evaluate(
        async ({ name, context }) => {
          const zws = await import("/dist/index.js");
          const { scenarios } = await import("/test/scenarios.js");
          await scenarios[name].run(zws, { ...context, harness: (...args) => globalThis.zwsHarness(...args) });
        },
        { name, context: { ...setup.context, bigFrame } },
      );
    } finally {
      harness = null;
      await setup.stop();
    }
  });
}

test("chromium: a page's REQ and SUB against sockets bound by Node (this package on both sides, plain ZWS2.0)", { timeout: 30000 }, async () => {
  const rep = new zws.Rep({ receiveTimeout: 10000 });
  await rep.bind("ws://127.0.0.1:*/rep");
  const pub = new zws.Pub();
  await pub.bind("ws://127.0.0.1:*/pub");
  let stop = false;
  const serving = (async () => {
    const [question] = await rep.receive();
    await rep.send(["answer to", question]);
    for (let i = 0; !stop; i++) {
      await pub.send([i % 2 ? "odd" : "even", String(i)]);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  try {
    await page.goto(`${base}/`);
    const got = await page.evaluate(
      async ({ repAt, pubAt }) => {
        const zws = await import("/dist/index.js");
        const req = new zws.Req({ receiveTimeout: 10000 });
        req.connect(repAt);
        await req.send("from the page");
        const reply = (await req.receive()).map((f) => new TextDecoder().decode(f));
        const sub = new zws.Sub({ receiveTimeout: 10000 });
        sub.connect(pubAt);
        sub.subscribe("odd");
        const topics = [];
        for (let i = 0; i < 5; i++) topics.push(new TextDecoder().decode((await sub.receive())[0]));
        req.close();
        sub.close();
        return { reply, topics };
      },
      { repAt: rep.lastEndpoint, pubAt: pub.lastEndpoint },
    );
    if (JSON.stringify(got.reply) !== JSON.stringify(["answer to", "from the page"])) throw new Error(`reply ${JSON.stringify(got.reply)}`);
    if (got.topics.some((t) => t !== "odd")) throw new Error(`SUB got ${JSON.stringify(got.topics)}`);
  } finally {
    stop = true;
    await serving.catch(() => {});
    rep.close();
    pub.close();
  }
});
