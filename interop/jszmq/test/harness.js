// What the jszmq interop tests share: the C peer (js/test/peer/zws-peer.c built against oxmq's
// libzmq.so.5 or libzmq 4.3.5 with drafts, named by JSZMQ_PEER) as a child process speaking its
// line protocol, an inbox over a jszmq socket's 'message' events, an HTTP server for jszmq to
// bind on, and bounded waits. Every wait ends with an error after its deadline.
"use strict";
const { spawn } = require("node:child_process");
const http = require("node:http");

const WAIT_MS = 5000;

/** The peer binary under test (set by scripts/test.d/42-jszmq.sh). */
function peerBinary() {
  const bin = process.env.JSZMQ_PEER;
  if (!bin) throw new Error("JSZMQ_PEER must name a zws-peer binary");
  return bin;
}

/** A frame as zws-peer prints it: lowercase hex, "-" for an empty frame. */
function hex(frame) {
  const b = Buffer.from(frame);
  return b.length === 0 ? "-" : b.toString("hex");
}

/** The RECV line zws-peer prints for a message of these frames. */
function recvLine(frames) {
  return "RECV " + frames.map(hex).join(" ");
}

/** Resolves when check() returns a truthy value (checked on every event of `emitter`'s
 *  `event`, and once now); rejects when check throws, or after ms with `what` (a string, or a
 *  function giving one then) in the message. */
function waitUntil(emitter, event, check, what, ms = WAIT_MS) {
  return new Promise((resolve, reject) => {
    const done = (err, value) => {
      clearTimeout(timer);
      emitter.removeListener(event, onEvent);
      err ? reject(err) : resolve(value);
    };
    const onEvent = () => {
      let value;
      try {
        value = check();
      } catch (err) {
        return done(err);
      }
      if (value) done(null, value);
    };
    const timer = setTimeout(() => done(new Error(`timed out after ${ms} ms waiting for ${typeof what === "function" ? what() : what}`)), ms);
    emitter.on(event, onEvent);
    onEvent();
  });
}

/** promise, or a rejection naming `what` after ms. */
function within(promise, what, ms = WAIT_MS) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** zws-peer as a child process: its stdout lines collected, 'line' emitted for each. */
class Peer extends require("node:events") {
  constructor(args) {
    super();
    this.args = args;
    this.lines = [];
    this.stderr = "";
    this.exited = false;
    let partial = "";
    this.proc = spawn(peerBinary(), args, { stdio: ["pipe", "pipe", "pipe"] });
    this.proc.stdout.setEncoding("latin1");
    this.proc.stdout.on("data", (chunk) => {
      partial += chunk;
      let nl;
      while ((nl = partial.indexOf("\n")) >= 0) {
        this.lines.push(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
        this.emit("line");
      }
    });
    this.proc.stderr.on("data", (chunk) => (this.stderr += chunk));
    this.proc.on("exit", (code, signal) => {
      this.exited = true;
      this.exitStatus = signal || code;
      this.emit("line");
    });
  }

  /** The endpoint from the BOUND line. */
  async bound() {
    const line = await this.waitLine((l) => l.startsWith("BOUND "), "the BOUND line");
    return line.slice("BOUND ".length);
  }

  /** The first line satisfying pred; fails early if the peer exits. */
  waitLine(pred, what, ms = WAIT_MS) {
    return waitUntil(
      this,
      "line",
      () => {
        const line = this.lines.find(pred);
        if (line !== undefined) return line;
        if (this.exited) throw new Error(`peer exited (${this.exitStatus}) before ${what}: ${this.stderr.trim()}`);
        return undefined;
      },
      () => `the peer's ${what} (peer ${this.args.join(" ")}; stderr: ${this.stderr.trim()})`,
      ms,
    );
  }

  /** The RECV lines so far. */
  recvs() {
    return this.lines.filter((l) => l.startsWith("RECV"));
  }

  /** Waits for at least n RECV lines and returns them all; fails early if the peer exits. */
  async waitRecvs(n, ms = WAIT_MS) {
    const what = () => `${n} RECV lines (have ${this.recvs().length}; peer ${this.args.join(" ")}; stderr: ${this.stderr.trim()})`;
    await waitUntil(
      this,
      "line",
      () => {
        if (this.recvs().length >= n) return true;
        if (this.exited) throw new Error(`peer exited (${this.exitStatus}) before ${what()}`);
        return false;
      },
      what,
      ms,
    );
    return this.recvs();
  }

  /** Closes its stdin (zws-peer exits then) and waits for the exit; kills it after 5 s. */
  async stop() {
    if (this.exited) return;
    const exited = new Promise((resolve) => this.proc.once("exit", resolve));
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** The messages a jszmq socket emits, in order, each an array of Buffers. */
class Inbox extends require("node:events") {
  constructor(socket) {
    super();
    this.messages = [];
    socket.on("message", (...frames) => {
      this.messages.push(frames.map((f) => Buffer.from(f)));
      this.emit("message");
    });
  }

  /** Waits for at least n messages and returns them all. */
  async take(n, ms = WAIT_MS) {
    await waitUntil(this, "message", () => this.messages.length >= n, () => `${n} messages (have ${this.messages.length})`, ms);
    return this.messages;
  }
}

/**
 * An HTTP server on a free loopback port for a jszmq socket to bind on (jszmq's bind(address,
 * server)). Its 'upgrade' hook, registered before jszmq's, narrows a client's protocol offer to
 * plain "ZWS2.0" when the offer includes it: jszmq hands the upgrade to the `ws` package, which
 * picks the client's first protocol, and libzmq and oxmq offer "ZWS2.0/NULL, ZWS2.0" (ZMTP's
 * NULL handshake first), which jszmq does not speak.
 */
async function httpServer({ narrowOffer = true } = {}) {
  const server = http.createServer((req, res) => res.writeHead(404).end());
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  if (narrowOffer) {
    server.on("upgrade", (req) => {
      const offered = (req.headers["sec-websocket-protocol"] || "").split(",").map((p) => p.trim());
      if (offered.includes("ZWS2.0")) req.headers["sec-websocket-protocol"] = "ZWS2.0";
    });
  }
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    port: server.address().port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

module.exports = { WAIT_MS, Peer, Inbox, hex, recvLine, waitUntil, within, httpServer };
