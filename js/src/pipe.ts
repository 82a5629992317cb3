/**
 * A pipe is what one connect() creates: a queue of outgoing messages and the connection that
 * carries it, re-established after every loss with libzmq's backoff (reconnectInterval plus a
 * random jitter of up to one interval, doubling up to reconnectMaxInterval when that is set).
 * Messages queued while disconnected (up to sendHighWaterMark) go out once the next handshake
 * completes; messages already handed to a WebSocket that then dies are lost with it, as bytes in
 * a TCP buffer are with libzmq.
 */
import { Connection, type SocketType } from "./connection.js";
import { AuthError, type ZmqError } from "./errors.js";
import type { Mechanism } from "./mechanism.js";
import type { Properties } from "./wire.js";
import type { OpenWebSocket, TlsOptions, WebSocketLike } from "./websocket.js";
import { namesMechanisms } from "#websocket";

/** Above this many bytes waiting in the WebSocket, messages stay in the pipe's queue. */
const WS_BACKLOG = 1 << 20;
const DRAIN_POLL_MS = 5;

export interface PipeSettings {
  sendHighWaterMark: number;
  receiveHighWaterMark: number;
  reconnectInterval: number;
  reconnectMaxInterval: number;
  handshakeInterval: number;
  maxMessageSize: number;
  tls: TlsOptions | undefined;
  identity: Uint8Array;
}

export interface PipeOwner {
  readonly type: SocketType;
  settings(): PipeSettings;
  mechanism(): Mechanism;
  openWebSocket: OpenWebSocket;
  pipeReady(pipe: Pipe): void;
  pipeMessage(pipe: Pipe, frames: Uint8Array[]): void;
  pipeSubscription(pipe: Pipe, topic: Uint8Array, subscribe: boolean): void;
  pipeDown(pipe: Pipe): void;
  /** An accepted connection ended: the pipe is finished. */
  pipeGone(pipe: Pipe): void;
  /** Room opened in the pipe's queue, or it became ready. */
  pipeWritable(pipe: Pipe): void;
  emit(type: string, detail: { address: string; interval?: number; error?: ZmqError }): void;
}

export class Pipe {
  /** The peer's metadata from the last handshake (null while not connected). */
  peer: Properties | null = null;
  /** The peer's routing id as a ROUTER sees it, set by the owner when the pipe is ready. */
  routingId: Uint8Array | null = null;
  /** The peer's subscriptions (PUB), keyed by the topic's bytes as latin1 text, with counts. */
  readonly subscriptions = new Map<string, number>();
  /** Received messages the socket holds for this pipe and has not handed out yet. */
  queued = 0;

  private conn: Connection | null = null;
  private readonly outq: Uint8Array[][] = [];
  private interval: number;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private drainTimer: ReturnType<typeof setTimeout> | null = null;
  private paused = false;
  private closed = false;

  /**
   * A pipe for connect(endpoint), which opens (and re-opens) its own WebSocket; or, with
   * `accepted`, one for a connection a bind() accepted, which ends with that connection.
   */
  constructor(
    private readonly owner: PipeOwner,
    readonly endpoint: string,
    private readonly accepted?: WebSocketLike,
    serverMechanism?: Mechanism,
  ) {
    this.interval = owner.settings().reconnectInterval;
    if (accepted) this.attach(accepted, serverMechanism!);
    else this.open();
  }

  get ready(): boolean {
    return this.conn?.ready ?? false;
  }

  /** Whether write() would take a message now. */
  get writable(): boolean {
    return !this.closed && this.outq.length < this.owner.settings().sendHighWaterMark;
  }

  /** Queues or sends a whole message; false when the queue is at sendHighWaterMark. */
  write(frames: Uint8Array[]): boolean {
    if (!this.writable) return false;
    this.outq.push(frames);
    this.flush();
    return true;
  }

  sendSubscription(topic: Uint8Array, subscribe: boolean): void {
    if (this.ready) this.conn!.sendSubscription(topic, subscribe);
  }

  /** The socket took one of this pipe's received messages. */
  consumed(): void {
    this.queued--;
    if (this.paused && this.queued < this.owner.settings().receiveHighWaterMark) {
      this.paused = false;
      this.conn?.resume();
    }
  }

  close(): void {
    this.closed = true;
    this.outq.length = 0;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    if (this.drainTimer !== null) clearTimeout(this.drainTimer);
    this.conn?.close();
    this.conn = null;
    this.peer = null;
  }

  private open(): void {
    let ws;
    let mechanism;
    try {
      mechanism = this.owner.mechanism();
      ws = this.owner.openWebSocket(this.endpoint, protocolsFor(mechanism), this.owner.settings().tls);
    } catch (error) {
      this.owner.emit("connect:error", { address: this.endpoint, error: error as ZmqError });
      this.retry();
      return;
    }
    this.attach(ws, mechanism);
  }

  private attach(ws: WebSocketLike, mechanism: Mechanism): void {
    const settings = this.owner.settings();
    this.conn = new Connection(ws, mechanism, this.owner.type, {
      ready: (peer) => {
        this.peer = peer;
        this.interval = this.owner.settings().reconnectInterval;
        this.owner.emit("handshake", { address: this.endpoint });
        this.owner.pipeReady(this);
        this.flush();
        this.owner.pipeWritable(this);
      },
      message: (frames) => {
        this.queued++;
        if (!this.paused && this.queued >= this.owner.settings().receiveHighWaterMark) {
          this.paused = true;
          this.conn?.pause();
        }
        this.owner.pipeMessage(this, frames);
      },
      subscription: (topic, subscribe) => this.owner.pipeSubscription(this, topic, subscribe),
      closed: (error, handshaken) => {
        this.conn = null;
        this.peer = null;
        this.paused = false;
        if (handshaken) {
          this.subscriptions.clear();
          this.owner.emit("disconnect", { address: this.endpoint, ...(error ? { error } : {}) });
          this.owner.pipeDown(this);
        } else if (error) {
          const type = error instanceof AuthError ? "handshake:error:auth" : error.code === "EPROTO" ? "handshake:error:protocol" : "connect:error";
          this.owner.emit(type, { address: this.endpoint, error });
        }
        if (this.accepted) {
          this.close();
          this.owner.pipeGone(this);
        } else {
          this.retry();
        }
      },
    }, { handshakeInterval: settings.handshakeInterval, maxMessageSize: settings.maxMessageSize, identity: settings.identity });
  }

  private retry(): void {
    if (this.closed) return;
    const settings = this.owner.settings();
    if (settings.reconnectInterval < 0) return;
    const base = this.interval;
    const delay = base + (base > 0 ? Math.floor(Math.random() * base) : 0);
    if (settings.reconnectMaxInterval > 0) this.interval = Math.min(base * 2, Math.max(settings.reconnectMaxInterval, settings.reconnectInterval));
    this.owner.emit("connect:retry", { address: this.endpoint, interval: delay });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.closed) this.open();
    }, delay);
  }

  private flush(): void {
    const conn = this.conn;
    if (!conn?.ready) return;
    const before = this.outq.length;
    while (this.outq.length > 0 && conn.bufferedAmount < WS_BACKLOG) conn.send(this.outq.shift()!);
    if (this.outq.length > 0 && this.drainTimer === null) {
      // Browsers have no 'drain' event on WebSocket: look again shortly while backlogged.
      this.drainTimer = setTimeout(() => {
        this.drainTimer = null;
        this.flush();
      }, DRAIN_POLL_MS);
    }
    if (this.outq.length < before) this.owner.pipeWritable(this);
  }
}

/**
 * What to offer in Sec-WebSocket-Protocol. Where the runtime can name mechanisms (Node) we offer
 * RFC 45's name, and for NULL also plain "ZWS2.0" as libzmq's client does. A browser cannot offer
 * a name with a "/" in it: it offers the browser-safe name oxmq's servers take for the same
 * protocol ("ZWS2.0-NULL", "ZWS2.0-PLAIN", "ZWS2.0-CURVE"), and for NULL also plain "ZWS2.0",
 * which libzmq's servers take.
 */
export function protocolsFor(mechanism: Mechanism): string[] {
  const name = mechanism.name;
  if (!namesMechanisms) return name === "NULL" ? ["ZWS2.0-NULL", "ZWS2.0"] : [`ZWS2.0-${name}`];
  return name === "NULL" ? ["ZWS2.0/NULL", "ZWS2.0"] : [`ZWS2.0/${name}`];
}
