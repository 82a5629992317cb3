/**
 * The socket base: options as properties (zeromq.js v6's names), connect/disconnect/close,
 * one pending send and one pending receive at a time (EBUSY otherwise, as zeromq.js), timeouts
 * (EAGAIN), and the pipes a socket type routes over. Each socket type (sockets.ts) supplies how a
 * message is routed out (xsend) and how one is taken in (accept, xreceive).
 */
import { type Listener, listen, openWebSocket } from "#websocket";
import type { SocketType } from "./connection.js";
import { type CurveAuthenticator, CurveClientMechanism, type CurveKey, CurveServerMechanism } from "./curve.js";
import { AgainError, BusyError, InvalidError, NotSupportedError, TermError, type ZmqError, ZmqError as ZmqErrorBase } from "./errors.js";
import { type Mechanism, NullMechanism, type PlainAuthenticator, PlainClientMechanism, PlainServerMechanism } from "./mechanism.js";
import { Pipe, type PipeOwner, type PipeSettings } from "./pipe.js";
import { type Properties, ascii } from "./wire.js";
import type { OpenWebSocket, TlsOptions } from "./websocket.js";

/** What send() takes for one frame: bytes (any view), an ArrayBuffer, text (UTF-8) or null (empty). */
export type MessageLike = ArrayBufferView | ArrayBuffer | string | null;

export interface SocketOptions {
  /** Our routing id, sent to the peer as the Identity property (REQ, DEALER, ROUTER). */
  routingId: string | Uint8Array | undefined;
  sendHighWaterMark: number;
  receiveHighWaterMark: number;
  /** Milliseconds a send may wait for room; -1 forever, 0 fail at once (EAGAIN). */
  sendTimeout: number;
  /** Milliseconds a receive may wait; -1 forever (EAGAIN when it expires). */
  receiveTimeout: number;
  /** Milliseconds before reconnecting a lost connection; -1 never. */
  reconnectInterval: number;
  /** When above reconnectInterval, the delay doubles after each failure up to this. */
  reconnectMaxInterval: number;
  /** Milliseconds the ZMTP handshake may take before the connection is dropped; 0 forever. */
  handshakeInterval: number;
  /** Largest message (sum of frames) accepted from a peer, -1 no limit; larger ones drop the connection. */
  maxMessageSize: number;
  plainUsername: string | undefined;
  plainPassword: string | undefined;
  /** Bound sockets: be a PLAIN server (a peer connecting must offer ZWS2.0/PLAIN). */
  plainServer: boolean;
  /** With plainServer: decides each client's username and password (without it all are let in). */
  plainAuthenticate: PlainAuthenticator | undefined;
  /** Set to the server's public key to use CURVE (Z85 text or 32 bytes). */
  curveServerKey: CurveKey | undefined;
  curvePublicKey: CurveKey | undefined;
  curveSecretKey: CurveKey | undefined;
  /** Bound sockets: be a CURVE server with curveSecretKey (a peer connecting must offer ZWS2.0/CURVE). */
  curveServer: boolean;
  /** With curveServer: decides each client's long-term public key, Z85 (without it all are let in). */
  curveAuthenticate: CurveAuthenticator | undefined;
  /** Node only: TLS settings for wss:// (in browsers the browser decides); key and cert for a wss:// bind. */
  tls: (TlsOptions & { key?: string; cert?: string }) | undefined;
}

const DEFAULTS: SocketOptions = {
  routingId: undefined,
  sendHighWaterMark: 1000,
  receiveHighWaterMark: 1000,
  sendTimeout: -1,
  receiveTimeout: -1,
  reconnectInterval: 100,
  reconnectMaxInterval: 0,
  handshakeInterval: 30000,
  maxMessageSize: -1,
  plainUsername: undefined,
  plainPassword: undefined,
  plainServer: false,
  plainAuthenticate: undefined,
  curveServerKey: undefined,
  curvePublicKey: undefined,
  curveSecretKey: undefined,
  curveServer: false,
  curveAuthenticate: undefined,
  tls: undefined,
};

export interface SocketEvent {
  type: string;
  address: string;
  interval?: number;
  error?: ZmqError;
}

/** Connection events, as zeromq.js's socket.events: "handshake", "disconnect", "connect:retry", "handshake:error:auth", ... */
export class SocketEvents {
  private readonly listeners = new Map<string, Set<(event: SocketEvent) => void>>();

  on(type: string, listener: (event: SocketEvent) => void): this {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener);
    return this;
  }

  off(type: string, listener: (event: SocketEvent) => void): this {
    this.listeners.get(type)?.delete(listener);
    return this;
  }

  /** @internal */
  emit(event: SocketEvent): void {
    for (const type of [event.type, "*"]) {
      for (const listener of this.listeners.get(type) ?? []) listener(event);
    }
  }
}

export function toFrame(part: MessageLike): Uint8Array {
  if (part === null) return new Uint8Array(0);
  if (typeof part === "string") return ascii(part);
  if (part instanceof Uint8Array) return part;
  if (part instanceof ArrayBuffer) return new Uint8Array(part);
  if (ArrayBuffer.isView(part)) return new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
  throw new InvalidError("a message frame must be bytes, an ArrayBuffer, a string or null");
}

interface Waiter {
  wake(): void;
}

export abstract class Socket implements PipeOwner, SocketOptions {
  abstract readonly type: SocketType;
  routingId: string | Uint8Array | undefined = DEFAULTS.routingId;
  sendHighWaterMark = DEFAULTS.sendHighWaterMark;
  receiveHighWaterMark = DEFAULTS.receiveHighWaterMark;
  sendTimeout = DEFAULTS.sendTimeout;
  receiveTimeout = DEFAULTS.receiveTimeout;
  reconnectInterval = DEFAULTS.reconnectInterval;
  reconnectMaxInterval = DEFAULTS.reconnectMaxInterval;
  handshakeInterval = DEFAULTS.handshakeInterval;
  maxMessageSize = DEFAULTS.maxMessageSize;
  plainUsername: string | undefined = DEFAULTS.plainUsername;
  plainPassword: string | undefined = DEFAULTS.plainPassword;
  plainServer = DEFAULTS.plainServer;
  plainAuthenticate: PlainAuthenticator | undefined = DEFAULTS.plainAuthenticate;
  curveServerKey: CurveKey | undefined = DEFAULTS.curveServerKey;
  curvePublicKey: CurveKey | undefined = DEFAULTS.curvePublicKey;
  curveSecretKey: CurveKey | undefined = DEFAULTS.curveSecretKey;
  curveServer = DEFAULTS.curveServer;
  curveAuthenticate: CurveAuthenticator | undefined = DEFAULTS.curveAuthenticate;
  tls: (TlsOptions & { key?: string; cert?: string }) | undefined = DEFAULTS.tls;
  /** The address of the last bind(), with its real port. */
  lastEndpoint: string | null = null;

  readonly events = new SocketEvents();
  /** Messages ZeroMQ's semantics dropped on this socket (PUB to a full pipe, ROUTER to an unknown id, ...). */
  dropped = 0;
  /** @internal */
  openWebSocket: OpenWebSocket = openWebSocket;

  protected readonly pipes: Pipe[] = [];
  /** Received messages, in arrival order, each with the pipe it came from. */
  protected readonly inbox: { pipe: Pipe; frames: Uint8Array[] }[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Map<string, Listener>();
  private sending = false;
  private receiving = false;
  private isClosed = false;

  constructor(options: Partial<SocketOptions> = {}) {
    for (const [key, value] of Object.entries(options)) {
      if (!(key in DEFAULTS)) throw new InvalidError(`unknown socket option ${key}`);
      (this as unknown as Record<string, unknown>)[key] = value;
    }
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Connects to a ws:// or wss:// endpoint; the connection (and its reconnects) runs in the background. */
  connect(address: string): void {
    this.checkOpen();
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw new InvalidError(`bad endpoint ${JSON.stringify(address)}`);
    }
    if (url.protocol !== "ws:" && url.protocol !== "wss:") throw new InvalidError(`endpoint ${address}: only ws:// and wss:// are supported`);
    this.mechanism(); // bad credentials fail here, not on every reconnect
    this.pipes.push(new Pipe(this, address));
  }

  /**
   * Node only: accepts ZWS connections at a ws:// or wss:// address ("*" for any port; the real
   * one is in lastEndpoint). NULL (taking "ZWS2.0/NULL" or plain "ZWS2.0"), or with plainServer
   * PLAIN ("ZWS2.0/PLAIN"), or with curveServer CURVE ("ZWS2.0/CURVE"); each also under its
   * browser-safe name ("ZWS2.0-NULL", "ZWS2.0-PLAIN", "ZWS2.0-CURVE"), answered as offered.
   */
  async bind(address: string): Promise<void> {
    this.checkOpen();
    if (!/^wss?:\/\//.test(address)) throw new InvalidError(`endpoint ${address}: only ws:// and wss:// are supported`);
    if (this.plainServer && this.curveServer) throw new InvalidError("plainServer and curveServer are both set");
    if (this.curveServer && this.curveSecretKey === undefined) throw new InvalidError("curveServer needs curveSecretKey");
    this.serverMechanism(); // a bad key fails here
    const name = this.curveServer ? "CURVE" : this.plainServer ? "PLAIN" : "NULL";
    const takes = [`ZWS2.0/${name}`, `ZWS2.0-${name}`, ...(name === "NULL" ? ["ZWS2.0"] : [])];
    if (this.listeners.has(address)) throw new InvalidError(`already bound to ${address}`);
    let listener: Listener;
    try {
      listener = await listen(
        address,
        (offered) => offered.find((p) => takes.includes(p)) ?? null,
        (ws) => {
          if (this.isClosed || !this.acceptsPeer()) {
            ws.close();
            return;
          }
          this.emit("accept", { address: listener.address });
          this.pipes.push(new Pipe(this, listener.address, ws, this.serverMechanism()));
        },
        this.tls,
      );
    } catch (error) {
      if (error instanceof ZmqErrorBase) throw error;
      throw new InvalidError(`cannot bind ${address}: ${(error as Error).message}`);
    }
    if (this.isClosed) {
      listener.close();
      throw new TermError();
    }
    this.listeners.set(address, listener);
    this.lastEndpoint = listener.address;
  }

  /** Stops accepting at an address given to bind() (or its lastEndpoint); its connections stay. */
  unbind(address: string): void {
    this.checkOpen();
    const entry = [...this.listeners].find(([given, l]) => given === address || l.address === address);
    if (!entry) throw new InvalidError(`not bound to ${address}`);
    entry[1].close();
    this.listeners.delete(entry[0]);
  }

  /** Closes the connection(s) to an endpoint given to connect(); queued messages for it are dropped. */
  disconnect(address: string): void {
    this.checkOpen();
    const index = this.pipes.findIndex((p) => p.endpoint === address);
    if (index < 0) throw new InvalidError(`not connected to ${address}`);
    const [pipe] = this.pipes.splice(index, 1);
    pipe!.close();
    this.removeInbox(pipe!);
    this.pipeDown(pipe!);
  }

  /** Closes every connection; pending and later send/receive calls fail with ETERM. */
  close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const listener of this.listeners.values()) listener.close();
    this.listeners.clear();
    for (const pipe of this.pipes) pipe.close();
    this.pipes.length = 0;
    this.inbox.length = 0;
    this.wake();
  }

  /** Sends one message (one frame, or an array of frames); resolves once it is queued. */
  async send(message: MessageLike | MessageLike[]): Promise<void> {
    this.checkOpen();
    if (this.sending) throw new BusyError("a send is already in progress on this socket");
    const frames = (Array.isArray(message) ? message : [message]).map(toFrame);
    this.sending = true;
    try {
      await this.xsend(frames);
    } finally {
      this.sending = false;
    }
  }

  /** Receives one message as its frames. */
  async receive(): Promise<Uint8Array[]> {
    this.checkOpen();
    if (this.receiving) throw new BusyError("a receive is already in progress on this socket");
    this.receiving = true;
    try {
      return await this.waitUntil(() => this.xreceive(), this.receiveTimeout);
    } finally {
      this.receiving = false;
    }
  }

  /** Messages until the socket is closed. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array[], void, undefined> {
    while (!this.isClosed) {
      try {
        yield await this.receive();
      } catch (error) {
        if ((error as ZmqError).code === "ETERM") return;
        throw error;
      }
    }
  }

  // --- what socket types provide -------------------------------------------------------------

  /** Routes one outgoing message; may wait (waitUntil) for room. */
  protected xsend(_frames: Uint8Array[]): Promise<void> {
    return Promise.reject(new NotSupportedError(`${this.type} sockets cannot send`));
  }

  /** Takes an arrived message into the inbox, or drops it (returns false). */
  protected accept(_pipe: Pipe, _frames: Uint8Array[]): boolean {
    return true;
  }

  /** The next message for receive(), or undefined to keep waiting. */
  protected xreceive(): Uint8Array[] | undefined {
    const entry = this.inbox.shift();
    if (!entry) return undefined;
    entry.pipe.consumed();
    return entry.frames;
  }

  /** Whether a bound socket takes one more connection (PAIR takes one peer). */
  protected acceptsPeer(): boolean {
    return true;
  }

  /** The properties we send in READY/INITIATE. */
  protected ownProperties(): Properties {
    const props: Properties = new Map([["Socket-Type", ascii(this.type)]]);
    if ((this.type === "REQ" || this.type === "DEALER" || this.type === "ROUTER") && this.routingId !== undefined) {
      const id = toFrame(this.routingId);
      if (id.length > 255) throw new InvalidError("routingId is at most 255 bytes");
      if (id.length > 0 && id[0] === 0) throw new InvalidError("routingId may not start with a zero byte");
      props.set("Identity", id);
    }
    return props;
  }

  // --- helpers for socket types ---------------------------------------------------------------

  /** Waits until `check` returns a value, re-checking after every change; EAGAIN after `timeout` ms (-1 forever). */
  protected waitUntil<T>(check: () => T | undefined, timeout: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | null = null;
      const waiter: Waiter = {
        wake: () => {
          if (this.isClosed) return finish(() => reject(new TermError()));
          let value: T | undefined;
          try {
            value = check();
          } catch (error) {
            return finish(() => reject(error));
          }
          if (value !== undefined) finish(() => resolve(value));
        },
      };
      const finish = (settle: () => void) => {
        this.waiters.delete(waiter);
        if (timer !== null) clearTimeout(timer);
        settle();
      };
      this.waiters.add(waiter);
      waiter.wake();
      if (this.waiters.has(waiter)) {
        if (timeout === 0) finish(() => reject(new AgainError()));
        else if (timeout > 0) timer = setTimeout(() => finish(() => reject(new AgainError())), timeout);
      }
    });
  }

  /** Re-checks every waiting send and receive. */
  protected wake(): void {
    for (const waiter of [...this.waiters]) waiter.wake();
  }

  protected checkOpen(): void {
    if (this.isClosed) throw new TermError();
  }

  protected removeInbox(pipe: Pipe): void {
    for (let i = this.inbox.length - 1; i >= 0; i--) if (this.inbox[i]!.pipe === pipe) this.inbox.splice(i, 1);
  }

  // --- PipeOwner ------------------------------------------------------------------------------

  /** @internal */
  settings(): PipeSettings {
    return {
      sendHighWaterMark: this.sendHighWaterMark,
      receiveHighWaterMark: this.receiveHighWaterMark,
      reconnectInterval: this.reconnectInterval,
      reconnectMaxInterval: this.reconnectMaxInterval,
      handshakeInterval: this.handshakeInterval,
      maxMessageSize: this.maxMessageSize,
      tls: this.tls,
      identity: this.ownProperties().get("Identity") ?? new Uint8Array(0),
    };
  }

  /** @internal */
  mechanism(): Mechanism {
    const props = this.ownProperties();
    if (this.curveServerKey !== undefined) {
      return new CurveClientMechanism(props, {
        serverKey: this.curveServerKey,
        ...(this.curvePublicKey !== undefined ? { publicKey: this.curvePublicKey } : {}),
        ...(this.curveSecretKey !== undefined ? { secretKey: this.curveSecretKey } : {}),
      });
    }
    if (this.plainUsername !== undefined || this.plainPassword !== undefined) {
      return new PlainClientMechanism(props, this.plainUsername ?? "", this.plainPassword ?? "");
    }
    return new NullMechanism(props);
  }

  /** The mechanism of a connection bind() accepted. */
  private serverMechanism(): Mechanism {
    const props = this.ownProperties();
    if (this.curveServer) return new CurveServerMechanism(props, this.curveSecretKey!, this.curveAuthenticate);
    return this.plainServer ? new PlainServerMechanism(props, this.plainAuthenticate) : new NullMechanism(props);
  }

  /** @internal */
  pipeReady(_pipe: Pipe): void {
    this.wake();
  }

  /** @internal */
  pipeMessage(pipe: Pipe, frames: Uint8Array[]): void {
    if (this.accept(pipe, frames)) {
      this.inbox.push({ pipe, frames });
      this.wake();
    } else {
      pipe.consumed();
    }
  }

  /** @internal */
  pipeSubscription(_pipe: Pipe, _topic: Uint8Array, _subscribe: boolean): void {}

  /** @internal */
  pipeDown(_pipe: Pipe): void {
    this.wake();
  }

  /** @internal */
  pipeGone(pipe: Pipe): void {
    const index = this.pipes.indexOf(pipe);
    if (index >= 0) this.pipes.splice(index, 1);
    this.wake();
  }

  /** @internal */
  pipeWritable(_pipe: Pipe): void {
    this.wake();
  }

  /** @internal */
  emit(type: string, detail: { address: string; interval?: number; error?: ZmqError }): void {
    this.events.emit({ type, ...detail });
  }
}
