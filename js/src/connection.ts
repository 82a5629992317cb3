/**
 * One ZWS 2.0 connection over an open(ing) WebSocket: the security handshake, the peer's socket
 * type check (RFC 45's table), then whole multipart messages in both directions. It knows nothing
 * of socket patterns; the pipe that owns it decides what messages mean and when to reconnect.
 */
import { type ZmqError, ConnectError, MessageSizeError, ProtocolError } from "./errors.js";
import { type Mechanism, RefusedHandshake } from "./mechanism.js";
import { type Properties, FLAG_COMMAND, FLAG_MORE, decodeCommand, decodeFrame, encodeFrame, text } from "./wire.js";
import type { WebSocketLike } from "./websocket.js";

export type SocketType = "REQ" | "REP" | "DEALER" | "ROUTER" | "PUB" | "SUB" | "XPUB" | "XSUB" | "PUSH" | "PULL" | "PAIR";

/** Which peer types each type accepts (RFC 45 "Socket Compatibility"; XPUB/XSUB as PUB/SUB). */
const PEERS: Record<SocketType, SocketType[]> = {
  PAIR: ["PAIR"],
  PUB: ["SUB", "XSUB"],
  XPUB: ["SUB", "XSUB"],
  SUB: ["PUB", "XPUB"],
  XSUB: ["PUB", "XPUB"],
  REQ: ["REP", "ROUTER"],
  REP: ["REQ", "DEALER"],
  DEALER: ["REP", "DEALER", "ROUTER"],
  ROUTER: ["REQ", "DEALER", "ROUTER"],
  PULL: ["PUSH"],
  PUSH: ["PULL"],
};

export interface ConnectionEvents {
  /** The handshake completed; `peer` holds the peer's metadata. */
  ready(peer: Properties): void;
  /** A whole message (all its frames) arrived. */
  message(frames: Uint8Array[]): void;
  /** A SUBSCRIBE (true) or CANCEL (false) command arrived (ZMTP 3.1 form). */
  subscription(topic: Uint8Array, subscribe: boolean): void;
  /** The connection ended; `error` says why when it was not an orderly close. */
  closed(error: ZmqError | null, handshaken: boolean): void;
}

export interface ConnectionOptions {
  handshakeInterval: number;
  maxMessageSize: number;
  /** Our routing id, sent as the first message when the server chose plain "ZWS2.0". */
  identity: Uint8Array;
}

export class Connection {
  private handshaken = false;
  private opened = false;
  /** The server chose "ZWS2.0": no mechanism, each side's first message is its routing id (RFC 45). */
  private bare = false;
  private ended = false;
  private partial: Uint8Array[] = [];
  private partialSize = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly ws: WebSocketLike,
    private readonly mechanism: Mechanism,
    private readonly localType: SocketType,
    private readonly events: ConnectionEvents,
    private readonly options: ConnectionOptions,
  ) {
    ws.onopen = () => this.guard(() => this.open());
    ws.onmessage = (event) => this.guard(() => this.received(event.data));
    ws.onerror = () => {
      /* onclose follows and reports it */
    };
    ws.onclose = (event) => {
      if (!this.opened) this.end(new ConnectError(`could not open the WebSocket${event.reason ? `: ${event.reason}` : ""}`));
      else this.end(this.handshaken && event.code === 1000 ? null : new ProtocolError(closeReason(event)));
    };
    if (options.handshakeInterval > 0) {
      this.timer = setTimeout(() => this.fail(new ProtocolError("handshake timed out")), options.handshakeInterval);
    }
  }

  get ready(): boolean {
    return this.handshaken && !this.ended;
  }

  /** Bytes handed to the WebSocket and not yet written to the network. */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Sends one message; the caller checks `ready` first. */
  send(frames: Uint8Array[]): void {
    for (let i = 0; i < frames.length; i++) {
      this.sendFrame(i < frames.length - 1 ? FLAG_MORE : 0, frames[i]!);
    }
  }

  /** A subscription as RFC 45 (and libzmq's ws engine) sends it: a message of 0x01/0x00 and the topic. */
  sendSubscription(topic: Uint8Array, subscribe: boolean): void {
    const body = new Uint8Array(topic.length + 1);
    body[0] = subscribe ? 1 : 0;
    body.set(topic, 1);
    this.sendFrame(0, body);
  }

  pause(): void {
    this.ws.pause?.();
  }

  resume(): void {
    this.ws.resume?.();
  }

  /** Closes the WebSocket; no event follows (the caller knows). */
  close(): void {
    if (this.ended) return;
    this.detach();
    try {
      this.ws.close(1000);
    } catch {
      /* already closing */
    }
  }

  private sendFrame(flags: number, body: Uint8Array): void {
    const frame = this.mechanism.encode({ flags, body });
    this.ws.send(encodeFrame(frame.flags, frame.body));
  }

  private open(): void {
    this.opened = true;
    const protocol = this.ws.protocol;
    if (protocol === "ZWS2.0" && this.mechanism.name === "NULL") {
      this.bare = true;
      this.ws.send(encodeFrame(0, this.options.identity));
      return;
    }
    const name = this.mechanism.name;
    if (protocol !== `ZWS2.0/${name}` && protocol !== `ZWS2.0-${name}`) {
      throw new ProtocolError(`server chose WebSocket protocol ${JSON.stringify(protocol)}, not ZWS2.0/${name}`);
    }
    for (const body of this.mechanism.start()) this.ws.send(encodeFrame(FLAG_COMMAND, body));
  }

  private received(data: unknown): void {
    if (this.ended) return;
    if (!(data instanceof ArrayBuffer)) throw new ProtocolError("ZWS: text WebSocket message");
    const raw = decodeFrame(new Uint8Array(data));
    if (!this.handshaken && this.bare) {
      if (raw.flags !== 0) throw new ProtocolError("ZWS2.0: the first message must be a single-frame routing id");
      this.handshaken = true;
      this.clearTimer();
      this.events.ready(new Map([["identity", raw.body.slice()]]));
      return;
    }
    if (!this.handshaken) {
      if (!(raw.flags & FLAG_COMMAND)) throw new ProtocolError("ZWS: a message frame before the handshake completed");
      let step;
      try {
        step = this.mechanism.onCommand(raw.body);
      } catch (error) {
        // A server refusing credentials says so (ERROR) before it closes.
        if (error instanceof RefusedHandshake) {
          this.ws.send(encodeFrame(FLAG_COMMAND, error.reply));
          throw error.error;
        }
        throw error;
      }
      for (const body of step.send) this.ws.send(encodeFrame(FLAG_COMMAND, body));
      if (step.peer) this.complete(step.peer);
      return;
    }
    const frame = this.mechanism.decode(raw);
    if (frame.flags & FLAG_COMMAND) {
      this.command(frame.body);
      return;
    }
    this.partialSize += frame.body.length;
    if (this.options.maxMessageSize >= 0 && this.partialSize > this.options.maxMessageSize) {
      throw new MessageSizeError(`message larger than maxMessageSize ${this.options.maxMessageSize}`);
    }
    this.partial.push(frame.body);
    if (!(frame.flags & FLAG_MORE)) {
      const message = this.partial;
      this.partial = [];
      this.partialSize = 0;
      this.events.message(message);
    }
  }

  private complete(peer: Properties): void {
    const type = text(peer.get("socket-type") ?? new Uint8Array(0)) as SocketType;
    if (!PEERS[this.localType].includes(type)) {
      throw new ProtocolError(`a ${this.localType} socket cannot talk to ${type ? `a ${type}` : "a peer without a Socket-Type"}`);
    }
    this.handshaken = true;
    this.clearTimer();
    this.events.ready(peer);
  }

  private command(body: Uint8Array): void {
    const cmd = decodeCommand(body);
    if (cmd.name === "SUBSCRIBE") this.events.subscription(cmd.data, true);
    else if (cmd.name === "CANCEL") this.events.subscription(cmd.data, false);
    // PING/PONG and unknown commands are ignored, as libzmq's ws engine does.
  }

  /** Runs a step of the protocol; any error ends the connection with it. */
  private guard(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.fail(error as ZmqError);
    }
  }

  private fail(error: ZmqError): void {
    if (this.ended) return;
    try {
      // Browsers accept only 1000 and 3000-4999 from scripts; the reason goes to our caller.
      this.ws.close();
    } catch {
      /* not open yet */
    }
    this.end(error);
  }

  private end(error: ZmqError | null): void {
    if (this.ended) return;
    this.detach();
    this.events.closed(error, this.handshaken);
  }

  /** No more events from the WebSocket (onerror stays: `ws` throws an 'error' nobody listens to). */
  private detach(): void {
    this.ended = true;
    this.clearTimer();
    this.ws.onopen = this.ws.onmessage = this.ws.onclose = null;
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}

function closeReason(event: { code: number; reason: string }): string {
  if (event.code === 1006) return "connection lost";
  return `WebSocket closed (${event.code}${event.reason ? ` ${event.reason}` : ""})`;
}
