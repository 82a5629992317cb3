// Throughput of the package's PUSH socket, under Node and inside headless Chromium, into
// libzmq's own perf receiver `local_thr` bound on ws:// (libzmq 4.3.5 with drafts; the same
// binary on oxmq's libzmq.so.5 when --oxmq names a dist/). Rounds are interleaved (each round
// runs every runtime x receiver x size once) and the table gives medians; the rate is local_thr's
// (first to last message received). Prints a Markdown table; --out FILE appends it there too.
//
//   node perf/throughput.mjs [--sizes 1,256,16384] [--count N] [--rounds 3] [--oxmq DIST]
//                            [--runtimes node,chromium] [--quick]
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import * as net from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as zws from "../dist/index.js";
import { importMap, launchChromium, staticServer } from "../test/chromium.js";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..");
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const quick = args.includes("--quick");
const sizes = arg("sizes", "1,256,16384").split(",").map(Number);
const rounds = Number(arg("rounds", quick ? 1 : 3));
const runtimes = arg("runtimes", "node,chromium").split(",");
const countFor = (size) => Number(arg("count", 0)) || Math.max(2000, Math.min(quick ? 20000 : 100000, Math.floor((quick ? 100e6 : 400e6) / (size + 64))));
const prefix =
  process.env.LIBZMQ_DRAFTS_PREFIX ||
  execFileSync("bash", [join(pkg, "..", "interop", "libzmq-drafts", "build.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim().split("\n").pop();
const receivers = [{ name: "libzmq 4.3.5", env: {} }];
if (arg("oxmq")) receivers.push({ name: "oxmq", env: { LD_LIBRARY_PATH: join(arg("oxmq"), "lib") } });

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(port, deadline) {
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`local_thr did not listen on ${port}`);
}

/** The sender: `count` messages of `size` bytes through a PUSH socket (runs in Node or a page). */
async function send(zws, endpoint, size, count) {
  const push = new zws.Push({ sendHighWaterMark: 10000 });
  push.connect(endpoint);
  const body = new Uint8Array(size).fill(7);
  for (let i = 0; i < count; i++) await push.send(body);
  return push;
}

async function one(runtime, receiver, size, count, page) {
  const port = await freePort();
  const endpoint = `ws://127.0.0.1:${port}/thr`;
  const child = spawn(join(prefix, "bin", "local_thr"), [endpoint, String(size), String(count)], {
    env: { ...process.env, ...receiver.env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const timer = setTimeout(() => child.kill(), 120000);
  try {
    await listening(port, Date.now() + 10000);
    if (runtime === "node") {
      const push = await send(zws, endpoint, size, count);
      await exited;
      push.close();
    } else {
      await page.evaluate(
        async ({ endpoint, size, count, source }) => {
          const zws = await import("/dist/index.js");
          const send = new Function(`return (${source})`)();
          globalThis.push = await send(zws, endpoint, size, count);
        },
        { endpoint, size, count, source: send.toString() },
      );
      await exited;
      await page.evaluate(() => globalThis.push.close());
    }
  } finally {
    clearTimeout(timer);
    child.kill();
  }
  const rate = /mean throughput: (\d+) \[msg\/s\]/.exec(out);
  if (!rate) throw new Error(`no rate from local_thr (${runtime}, ${receiver.name}, ${size} B): ${out}`);
  return Number(rate[1]);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = new Map();
let browser = null;
let page = null;
let server = null;
if (runtimes.includes("chromium")) {
  server = staticServer(pkg);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  browser = await launchChromium();
  page = await browser.newPage();
  await page.route(`http://127.0.0.1:${server.address().port}/`, (route) =>
    route.fulfill({ contentType: "text/html", body: `<!doctype html><script type="importmap">${JSON.stringify(importMap)}</script>` }),
  );
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
}
try {
  for (let r = 0; r < rounds; r++) {
    for (const size of sizes) {
      for (const runtime of runtimes) {
        for (const receiver of receivers) {
          const key = `${runtime}|${receiver.name}|${size}`;
          const rate = await one(runtime, receiver, size, countFor(size), page);
          results.set(key, [...(results.get(key) ?? []), rate]);
          process.stderr.write(`round ${r + 1}: ${key}: ${rate} msg/s\n`);
        }
      }
    }
  }
} finally {
  await browser?.close();
  server?.close();
}

const chromiumVersion = browser ? browser.version() : "";
let table = `\n## The js/ client's PUSH over ws:// into local_thr (median of ${rounds}, interleaved)\n\n`;
table += `Sender: @oxmq/zws under Node ${process.version}${chromiumVersion ? ` and in headless Chromium ${chromiumVersion}` : ""}; `;
table += `receiver: libzmq's local_thr (4.3.5 drafts${arg("oxmq") ? "; and the same binary on oxmq's libzmq.so.5" : ""}). Command: \`node js/perf/throughput.mjs ${args.join(" ")}\`\n\n`;
table += "| sender | receiver | size | msg/s | MB/s |\n|---|---|---:|---:|---:|\n";
for (const size of sizes)
  for (const runtime of runtimes)
    for (const receiver of receivers) {
      const m = median(results.get(`${runtime}|${receiver.name}|${size}`));
      table += `| ${runtime} | ${receiver.name} | ${size} B | ${m.toLocaleString("en")} | ${((m * size) / 1e6).toFixed(1)} |\n`;
    }
process.stdout.write(table);
if (arg("out")) appendFileSync(arg("out"), table);
