// Node side of the tests: builds and runs zws-peer (peer/zws-peer.c) and answers the scenarios'
// harness calls. The peer is the only libzmq-specific part:
//   ZWS_PEER=/path/to/zws-peer          use this binary (any build of peer/zws-peer.c)
//   ZWS_PEER_LIBRARY_PATH=dir           prepend to its LD_LIBRARY_PATH (e.g. oxmq's dist/lib, to
//                                       run the same peer on oxmq's libzmq.so.5)
//   LIBZMQ_DRAFTS_PREFIX=dir            the libzmq to build it against (default: the prefix
//                                       interop/libzmq-drafts/build.sh prints, building it if needed)
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
let peerPath = null;

export function peerBinary() {
  if (peerPath) return peerPath;
  if (process.env.ZWS_PEER) return (peerPath = process.env.ZWS_PEER);
  const prefix =
    process.env.LIBZMQ_DRAFTS_PREFIX ||
    execFileSync("bash", [join(repo, "interop", "libzmq-drafts", "build.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  const source = join(here, "peer", "zws-peer.c");
  const out = join(here, "..", "test-results", "zws-peer");
  if (!existsSync(out) || statSync(out).mtimeMs < statSync(source).mtimeMs) {
    mkdirSync(dirname(out), { recursive: true });
    execFileSync("gcc", ["-O1", "-Wall", "-o", out, source, `-I${prefix}/include`, `-L${prefix}/lib`, `-Wl,-rpath,${prefix}/lib`, "-lzmq", "-lpthread"], {
      stdio: "inherit",
    });
  }
  return (peerPath = out);
}

function fromHex(word) {
  return word === "-" ? "" : Buffer.from(word, "hex").toString("utf8");
}

/** One running zws-peer and what it printed. */
export class Peer {
  constructor(args) {
    this.args = args;
    this.endpoint = null;
    this.lines = [];
    this.waiters = new Set();
  }

  static async start(args, endpoint = args.includes("--wss") ? "wss://127.0.0.1:*/zws" : "ws://127.0.0.1:*/zws") {
    const peer = new Peer(args);
    await peer.launch(endpoint);
    return peer;
  }

  launch(endpoint) {
    const env = { ...process.env };
    if (process.env.ZWS_PEER_LIBRARY_PATH) env.LD_LIBRARY_PATH = [process.env.ZWS_PEER_LIBRARY_PATH, env.LD_LIBRARY_PATH].filter(Boolean).join(":");
    const [type, ...rest] = this.args;
    const child = spawn(peerBinary(), [type, endpoint, ...rest], { stdio: ["pipe", "pipe", "pipe"], env });
    this.child = child;
    this.stderr = "";
    child.stderr.on("data", (d) => (this.stderr += d));
    let pending = "";
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`zws-peer ${type} did not bind ${endpoint} in 10 s: ${this.stderr}`)), 10000);
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`zws-peer ${type} exited (${code}): ${this.stderr}`));
      });
      child.stdout.on("data", (chunk) => {
        pending += chunk;
        let nl;
        while ((nl = pending.indexOf("\n")) >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.startsWith("BOUND ")) {
            this.endpoint = line.slice(6);
            clearTimeout(timer);
            resolve();
          } else if (line.startsWith("RECV")) {
            this.lines.push(line.split(" ").slice(1).map(fromHex));
            for (const wake of this.waiters) wake();
          }
        }
      });
    });
  }

  waitLines(n, ms = 10000) {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.lines.length < n) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`peer ${this.args[0]} got ${this.lines.length} messages, waited for ${n}`));
      }, ms);
      this.waiters.add(check);
      check();
    });
  }

  kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.removeAllListeners("exit");
      child.on("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }

  async restart() {
    await this.kill();
    await this.launch(this.endpoint);
  }
}

/** A ws:// endpoint on a loopback port nothing listens on (it was free a moment ago). */
export async function closedEndpoint() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return `ws://127.0.0.1:${port}/zws`;
}

/** Starts a scenario's peers; returns the context its run() gets (minus harness transport) and a stop(). */
export async function setUp(scenario, keys) {
  const peers = [];
  try {
    for (const args of scenario.peers(keys)) peers.push(await Peer.start(args));
  } catch (error) {
    await Promise.all(peers.map((p) => p.kill()));
    throw error;
  }
  const harness = async (op, index, n) => {
    if (op === "spawn") {
      // index: the peer's arguments, endpoint second (a peer that connects to the scenario's bind).
      const [type, endpoint, ...rest] = index;
      peers.push(await Peer.start([type, ...rest], endpoint));
      return peers.length - 1;
    }
    const peer = peers[index];
    if (!peer) throw new Error(`no peer ${index}`);
    if (op === "lines") return peer.lines;
    if (op === "waitLines") return peer.waitLines(n);
    if (op === "kill") return peer.kill();
    if (op === "restart") return peer.restart();
    throw new Error(`unknown harness op ${op}`);
  };
  return {
    context: { endpoints: peers.map((p) => p.endpoint), closedEndpoint: await closedEndpoint(), keys },
    harness,
    stop: () => Promise.all(peers.map((p) => p.kill())),
  };
}

/**
 * Keys for the scenarios: CURVE key pairs (the server's, an accepted client's, one nobody
 * accepts) and, for wss://, a throwaway CA with a server certificate for 127.0.0.1 and localhost
 * (openssl), plus a second CA that signed nothing here.
 */
export function makeKeys(zws) {
  const dir = join(here, "..", "test-results", "tls");
  mkdirSync(dir, { recursive: true });
  const ssl = (...args) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  for (const ca of ["ca", "other-ca"]) {
    ssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", `/CN=zws test ${ca}`, "-keyout", `${ca}.key`, "-out", `${ca}.pem`);
  }
  ssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out", "server.csr");
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  ssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "server.pem");
  // Chromium's --ignore-certificate-errors-spki-list takes the base64 SHA-256 of the key's SPKI.
  const spki = execFileSync("sh", ["-c", "openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"], { cwd: dir, encoding: "utf8" }).trim();
  return {
    server: zws.curveKeyPair(),
    client: zws.curveKeyPair(),
    other: zws.curveKeyPair(),
    tls: {
      cert: join(dir, "server.pem"),
      key: join(dir, "server.key"),
      ca: readFileSync(join(dir, "ca.pem"), "utf8"),
      certPem: readFileSync(join(dir, "server.pem"), "utf8"),
      keyPem: readFileSync(join(dir, "server.key"), "utf8"),
      otherCa: readFileSync(join(dir, "other-ca.pem"), "utf8"),
      spki,
    },
  };
}
