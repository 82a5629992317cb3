/**
 * `#websocket` under Node: a small RFC 6455 client over node:net / node:tls. Not the `ws`
 * package or Node's undici WebSocket, because both (like browsers) refuse subprotocol names that
 * are not RFC 2616 tokens, and RFC 45's names ("ZWS2.0/NULL", "ZWS2.0/PLAIN", "ZWS2.0/CURVE")
 * contain "/". Client side only: frames we send are masked, frames we receive must not be;
 * fragmented data messages are reassembled; control frames must be final and at most 125 bytes.
 */
import { createHash, randomBytes } from "node:crypto";
import * as http from "node:http";
import * as https from "node:https";
import * as net from "node:net";
import * as tls from "node:tls";
import type { Listener, ServerTlsOptions, TlsOptions, WebSocketLike } from "./websocket.js";
export type { Listener } from "./websocket.js";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const MAX_HANDSHAKE = 16 * 1024;

/** Masking keys come from the CSPRNG (RFC 6455 10.3), taken 4 bytes at a time from a pool. */
let maskPool = Buffer.alloc(0);
let maskAt = 0;
function maskKey(): Buffer {
  if (maskAt + 4 > maskPool.length) {
    maskPool = randomBytes(4096);
    maskAt = 0;
  }
  maskAt += 4;
  return maskPool.subarray(maskAt - 4, maskAt);
}

/** Node's WebSocket client names mechanisms in Sec-WebSocket-Protocol as RFC 45 does. */
export const namesMechanisms = true;

class NodeWebSocket implements WebSocketLike {
  binaryType = "arraybuffer";
  readyState = 0;
  protocol = "";
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;

  private readonly socket: net.Socket;
  private readonly server: boolean = false;
  /** Server side: data waits until onopen has run. */
  private announced = true;
  private buffer: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  private closeSent = false;
  private corked = false;
  private closeEvent: { code: number; reason: string } | null = null;

  /**
   * A client connecting to `url` (masks what it sends; the server must not), or, with `accepted`,
   * the server side of a connection whose HTTP upgrade is already answered (frames from the
   * client must be masked; ours are not).
   */
  constructor(url: URL, protocols: string[], tlsOptions: TlsOptions | undefined, accepted?: { socket: net.Socket; head: Buffer; protocol: string }) {
    if (accepted) {
      this.server = true;
      this.socket = accepted.socket;
      this.protocol = accepted.protocol;
      this.buffer = accepted.head;
      this.readyState = 1;
      this.announced = false;
      this.attach(null, protocols);
      // The owner sets its handlers after construction: open (and any data already read) then.
      setImmediate(() => {
        if (this.readyState !== 1) return;
        this.announced = true;
        this.onopen?.({});
        if (this.buffer.length) this.consume(Buffer.alloc(0), null, protocols);
      });
      return;
    }
    const secure = url.protocol === "wss:";
    const port = Number(url.port || (secure ? 443 : 80));
    const host = url.hostname.replace(/^\[|\]$/g, "");
    this.socket = secure
      ? tls.connect({
          host,
          port,
          servername: tlsOptions?.servername ?? (net.isIP(host) ? "" : host),
          ...(tlsOptions?.ca !== undefined ? { ca: tlsOptions.ca } : {}),
          ...(tlsOptions?.rejectUnauthorized !== undefined ? { rejectUnauthorized: tlsOptions.rejectUnauthorized } : {}),
        })
      : net.connect({ host, port });
    const key = randomBytes(16).toString("base64");
    const request =
      `GET ${url.pathname || "/"}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Protocol: ${protocols.join(", ")}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
    this.socket.once(secure ? "secureConnect" : "connect", () => this.socket.write(request));
    this.attach(key, protocols);
  }

  private consume(chunk: Buffer, key: string | null, protocols: string[]): void {
    try {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      if (!this.announced) return;
      if (this.readyState === 0) this.handshake(key!, protocols);
      if (this.readyState === 1 || this.readyState === 2) this.frames();
    } catch (error) {
      this.abort(1002, (error as Error).message);
    }
  }

  private attach(key: string | null, protocols: string[]): void {
    this.socket.setNoDelay(true);
    this.socket.on("data", (chunk: Buffer) => this.consume(chunk, key, protocols));
    this.socket.on("error", (error) => {
      this.closeEvent ??= { code: 1006, reason: error.message };
      this.onerror?.(error);
    });
    this.socket.on("close", () => {
      this.readyState = 3;
      this.onclose?.(this.closeEvent ?? { code: 1006, reason: "" });
    });
  }

  get bufferedAmount(): number {
    return this.socket.writableLength;
  }

  send(data: Uint8Array): void {
    if (this.readyState === 0) throw new Error("WebSocket is not open");
    // Closing or closed: discarded, as a browser's WebSocket does; the close event follows and
    // ends the connection. (Throwing here failed whatever sent to a peer that had just left.)
    if (this.readyState !== 1) return;
    this.writeFrame(0x2, data);
  }

  close(code = 1000, reason = ""): void {
    if (this.readyState === 0) {
      this.closeEvent = { code: 1006, reason: "closed before the handshake" };
      this.socket.destroy();
      return;
    }
    if (this.readyState !== 1) return;
    this.readyState = 2;
    this.sendClose(code, reason);
    this.socket.end();
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  private handshake(key: string, protocols: string[]): void {
    const end = this.buffer.indexOf("\r\n\r\n");
    if (end < 0) {
      if (this.buffer.length > MAX_HANDSHAKE) throw new Error("HTTP upgrade response too large");
      return;
    }
    const lines = this.buffer.subarray(0, end).toString("latin1").split("\r\n");
    this.buffer = this.buffer.subarray(end + 4);
    if (!/^HTTP\/1\.1 101 /.test(lines[0] ?? "")) throw new Error(`server refused the upgrade: ${lines[0]}`);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const accept = createHash("sha1").update(key + GUID).digest("base64");
    if (headers.get("sec-websocket-accept") !== accept) throw new Error("bad Sec-WebSocket-Accept");
    if (headers.get("upgrade")?.toLowerCase() !== "websocket") throw new Error("missing Upgrade: websocket");
    const protocol = headers.get("sec-websocket-protocol") ?? "";
    if (!protocols.includes(protocol)) throw new Error(`server chose subprotocol ${JSON.stringify(protocol)}, not one offered`);
    this.protocol = protocol;
    this.readyState = 1;
    this.onopen?.({});
  }

  private frames(): void {
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      const fin = (b[0]! & 0x80) !== 0;
      const opcode = b[0]! & 0x0f;
      if (b[0]! & 0x70) throw new Error("reserved bits set");
      const masked = (b[1]! & 0x80) !== 0;
      if (masked !== this.server) throw new Error(this.server ? "unmasked frame from a client" : "masked frame from the server");
      let length = b[1]! & 0x7f;
      let at = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        const big = b.readBigUInt64BE(2);
        if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error("frame too large");
        length = Number(big);
        at = 10;
      }
      const maskAt = at;
      if (masked) at += 4;
      if (b.length < at + length) return;
      let payload = b.subarray(at, at + length);
      this.buffer = b.subarray(at + length);
      if (masked) {
        payload = Buffer.from(payload);
        for (let i = 0; i < length; i++) payload[i] = payload[i]! ^ b[maskAt + (i & 3)]!;
      }
      if (opcode >= 0x8) {
        if (!fin || length > 125) throw new Error("fragmented or oversized control frame");
        this.control(opcode, payload);
        if (this.readyState === 3) return;
        continue;
      }
      if (opcode === 0x0) {
        if (this.fragments.length === 0) throw new Error("continuation without a message");
      } else if (opcode === 0x1 || opcode === 0x2) {
        if (this.fragments.length > 0) throw new Error("new message inside a fragmented one");
        if (opcode === 0x1) throw new Error("text message (ZWS carries binary messages only)");
      } else {
        throw new Error(`unknown opcode ${opcode}`);
      }
      this.fragments.push(Buffer.from(payload));
      if (fin) {
        const whole = this.fragments.length === 1 ? this.fragments[0]! : Buffer.concat(this.fragments);
        this.fragments = [];
        if (this.readyState === 1) {
          const data = whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.length);
          this.onmessage?.({ data });
        }
      }
    }
  }

  private control(opcode: number, payload: Buffer): void {
    if (opcode === 0x9) {
      if (this.readyState === 1) this.writeFrame(0xa, payload);
    } else if (opcode === 0x8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      this.closeEvent = { code, reason: payload.subarray(2).toString("utf8") };
      if (this.readyState === 1) this.sendClose(code === 1005 ? 1000 : code, "");
      this.readyState = 2;
      this.socket.end();
    } else if (opcode !== 0xa) {
      throw new Error(`unknown control opcode ${opcode}`);
    }
  }

  private sendClose(code: number, reason: string): void {
    if (this.closeSent) return;
    this.closeSent = true;
    const body = Buffer.alloc(2 + Buffer.byteLength(reason));
    body.writeUInt16BE(code, 0);
    body.write(reason, 2);
    this.writeFrame(0x8, body);
  }

  private writeFrame(opcode: number, data: Uint8Array): void {
    const length = data.length;
    const maskBit = this.server ? 0 : 0x80;
    const headerLength = 2 + (length > 0xffff ? 8 : length > 125 ? 2 : 0) + (this.server ? 0 : 4);
    const header = Buffer.allocUnsafe(headerLength);
    header[0] = 0x80 | opcode;
    if (length > 0xffff) {
      header[1] = maskBit | 127;
      header.writeBigUInt64BE(BigInt(length), 2);
    } else if (length > 125) {
      header[1] = maskBit | 126;
      header.writeUInt16BE(length, 2);
    } else {
      header[1] = maskBit | length;
    }
    if (this.server) {
      this.write(header, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      return;
    }
    const mask = maskKey();
    mask.copy(header, headerLength - 4);
    // The payload in a fresh (so 4-byte aligned) buffer, masked a word at a time, then the tail.
    const payload = new Uint8Array(length);
    const words = length >>> 2;
    if (words > 0) {
      const m = new Uint32Array(Uint8Array.from(mask).buffer)[0]!; // native order, as the views below
      const out = new Uint32Array(payload.buffer, 0, words);
      if (data.byteOffset % 4 === 0) {
        const src = new Uint32Array(data.buffer, data.byteOffset, words);
        for (let i = 0; i < words; i++) out[i] = src[i]! ^ m;
      } else {
        payload.set(data.subarray(0, words << 2));
        for (let i = 0; i < words; i++) out[i]! ^= m;
      }
    }
    for (let i = words << 2; i < length; i++) payload[i] = data[i]! ^ mask[i & 3]!;
    this.write(header, payload);
  }

  private write(header: Buffer, payload: Uint8Array): void {
    // Frames written in one turn of the event loop leave in one writev.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(header);
    if (payload.length > 0) this.socket.write(payload);
  }

  private abort(code: number, reason: string): void {
    this.closeEvent = { code, reason };
    if (this.readyState === 1) this.sendClose(code, "");
    this.readyState = 2;
    this.socket.destroy();
  }
}

export function openWebSocket(url: string, protocols: string[], tlsOptions: TlsOptions | undefined): WebSocketLike {
  return new NodeWebSocket(new URL(url), protocols, tlsOptions);
}

/**
 * Listens for WebSocket upgrades at a ws:// or wss:// address ("*" or 0 for any port). Each
 * request whose path matches and whose Sec-WebSocket-Protocol offers a name `choose` accepts
 * is answered 101 and handed to `accept`; anything else gets 400 (or 404 for another path) and
 * is closed.
 */
export async function listen(
  address: string,
  choose: (offered: string[]) => string | null,
  accept: (ws: WebSocketLike) => void,
  tlsOptions: ServerTlsOptions | undefined,
): Promise<Listener> {
  const url = new URL(address.replace(/:\*(?=\/|$)/, ":0"));
  const secure = url.protocol === "wss:";
  if (secure && (!tlsOptions?.key || !tlsOptions.cert)) throw new Error("a wss:// bind needs tls.key and tls.cert");
  const server = secure ? https.createServer({ key: tlsOptions!.key!, cert: tlsOptions!.cert! }) : http.createServer();
  server.on("request", (_req, res) => res.writeHead(426, { Upgrade: "websocket", Connection: "close" }).end());
  server.on("upgrade", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    const refuse = (status: string) => {
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      socket.destroy();
    };
    socket.on("error", () => socket.destroy());
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== (url.pathname || "/")) return refuse("404 Not Found");
    const key = req.headers["sec-websocket-key"];
    const connection = (req.headers.connection ?? "").toLowerCase().split(/\s*,\s*/);
    if (
      (req.headers.upgrade ?? "").toLowerCase() !== "websocket" ||
      !connection.includes("upgrade") ||
      req.headers["sec-websocket-version"] !== "13" ||
      typeof key !== "string" ||
      Buffer.from(key, "base64").length !== 16
    ) {
      return refuse("400 Bad Request");
    }
    const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim()).filter(Boolean);
    const protocol = choose(offered);
    if (!protocol) return refuse("400 Bad Request");
    const acceptKey = createHash("sha1").update(key + GUID).digest("base64");
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${acceptKey}\r\nSec-WebSocket-Protocol: ${protocol}\r\n\r\n`,
    );
    accept(new NodeWebSocket(url, [], undefined, { socket, head, protocol }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(Number(url.port || (secure ? 443 : 80)), url.hostname.replace(/^\[|\]$/g, ""), () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `${url.protocol}//${url.hostname}:${port}${url.pathname}`,
    close: () => {
      server.close();
      server.closeAllConnections?.();
    },
  };
}
