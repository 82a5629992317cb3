// The demo's tiny server: starts the ZeroMQ backend (backend.c, built against libzmq with ws://,
// as the tests' peer is) and serves the page, the package's dist/ and its @noble dependencies.
//
//   node demo/server.mjs [port]        then open the printed http:// address
//
// DEMO_BACKEND=/path/to/binary uses a prebuilt backend; ZWS_PEER_LIBRARY_PATH and
// LIBZMQ_DRAFTS_PREFIX work as for the tests (test/harness.js).
import { execFileSync, spawn } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, statSync } from "node:fs";
import * as http from "node:http";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..");
const repo = join(pkg, "..");
const served = ["/dist/", "/demo/", "/node_modules/@noble/"];
const types = { ".js": "text/javascript", ".html": "text/html", ".json": "application/json", ".map": "application/json" };

function backendBinary() {
  if (process.env.DEMO_BACKEND) return process.env.DEMO_BACKEND;
  const prefix =
    process.env.LIBZMQ_DRAFTS_PREFIX ||
    execFileSync("bash", [join(repo, "interop", "libzmq-drafts", "build.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  const source = join(here, "backend.c");
  const out = join(pkg, "test-results", "demo-backend");
  if (!existsSync(out) || statSync(out).mtimeMs < statSync(source).mtimeMs) {
    mkdirSync(dirname(out), { recursive: true });
    execFileSync("gcc", ["-O1", "-Wall", "-o", out, source, `-I${prefix}/include`, `-L${prefix}/lib`, `-Wl,-rpath,${prefix}/lib`, "-lzmq", "-lpthread", "-lm"], { stdio: "inherit" });
  }
  return out;
}

function startBackend() {
  const env = { ...process.env };
  if (process.env.ZWS_PEER_LIBRARY_PATH) env.LD_LIBRARY_PATH = [process.env.ZWS_PEER_LIBRARY_PATH, env.LD_LIBRARY_PATH].filter(Boolean).join(":");
  const child = spawn(backendBinary(), [], { stdio: ["pipe", "pipe", "inherit"], env });
  const config = {};
  let pending = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the demo backend did not bind in 10 s")), 10000);
    child.on("exit", (code) => reject(new Error(`the demo backend exited (${code})`)));
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      for (const line of pending.split("\n").slice(0, -1)) {
        const [tag, endpoint] = line.split(" ");
        if (tag === "TICKS") config.ticks = endpoint;
        if (tag === "ASK") config.ask = endpoint;
      }
      pending = pending.slice(pending.lastIndexOf("\n") + 1);
      if (config.ticks && config.ask) {
        clearTimeout(timer);
        resolve({ child, config });
      }
    });
  });
}

/** Starts the backend and the HTTP server; resolves with the page's URL and a close(). */
export async function startDemo(port = 0) {
  const { child, config } = await startBackend();
  const server = http.createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (path === "/config.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(config));
      return;
    }
    const file = path === "/" ? join(here, "index.html") : served.some((p) => path.startsWith(p)) ? join(pkg, path) : null;
    if (!file || !file.startsWith(pkg) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    config,
    close: () => {
      child.removeAllListeners("exit");
      child.kill();
      server.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const demo = await startDemo(Number(process.argv[2] || 8080));
  console.log(`DEMO ${demo.url}  (ZeroMQ: ${demo.config.ticks}, ${demo.config.ask})`);
  process.on("SIGINT", () => {
    demo.close();
    process.exit(0);
  });
}
