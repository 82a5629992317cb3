/**
 * The socket types, built from three routing pieces as libzmq's are: a load balancer (REQ,
 * DEALER, PUSH: round-robin over pipes with room, waiting when none has), the inbox (arrival
 * order across pipes: fair queuing in a single-threaded runtime), and a distributor (PUB: every
 * pipe whose peer subscribed to a prefix of the first frame; a full pipe drops, counted).
 */
import { HostUnreachableError, InvalidError, NotSupportedError, StateError } from "./errors.js";
import type { Pipe } from "./pipe.js";
import { type MessageLike, Socket, type SocketOptions, toFrame } from "./socket.js";
import { equalBytes } from "./wire.js";

/** Round-robin over the pipes that have room; undefined when none has. */
class LoadBalancer {
  private next = 0;
  pick(pipes: Pipe[]): Pipe | undefined {
    for (let i = 0; i < pipes.length; i++) {
      const index = (this.next + i) % pipes.length;
      const pipe = pipes[index]!;
      if (pipe.writable) {
        this.next = index + 1;
        return pipe;
      }
    }
    return undefined;
  }
}

function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4096) out += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return out;
}

/** Whether any subscription is a prefix of the topic. */
function matches(subscriptions: Map<string, number>, topic: Uint8Array): boolean {
  if (subscriptions.size === 0) return false;
  if (subscriptions.has("")) return true;
  const text = latin1(topic);
  for (const prefix of subscriptions.keys()) if (text.startsWith(prefix)) return true;
  return false;
}

/** Adds (+1) or removes (-1) one count of a subscription; true when the set of topics changed. */
function count(subscriptions: Map<string, number>, key: string, delta: 1 | -1): boolean {
  const now = (subscriptions.get(key) ?? 0) + delta;
  if (now < 0) return false;
  if (now === 0) subscriptions.delete(key);
  else subscriptions.set(key, now);
  return delta === 1 ? now === 1 : now === 0;
}

/** Sends requests and receives their replies, strictly alternating; requests load-balance over the peers. */
export class Request extends Socket {
  readonly type = "REQ" as const;
  private readonly lb = new LoadBalancer();
  private awaiting: Pipe | null = null;

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    if (this.awaiting) throw new StateError("REQ: receive the reply to the previous request first");
    const pipe = await this.waitUntil(() => this.lb.pick(this.pipes), this.sendTimeout);
    pipe.write([new Uint8Array(0), ...frames]);
    this.awaiting = pipe;
  }

  protected override accept(pipe: Pipe, frames: Uint8Array[]): boolean {
    // Only a reply from the peer that has our request, behind the empty delimiter.
    if (pipe !== this.awaiting || frames.length < 2 || frames[0]!.length !== 0 || this.inbox.length > 0) {
      this.dropped++;
      return false;
    }
    return true;
  }

  protected override xreceive(): Uint8Array[] | undefined {
    if (!this.awaiting) throw new StateError("REQ: send a request first");
    const entry = this.inbox.shift();
    if (!entry) return undefined;
    entry.pipe.consumed();
    this.awaiting = null;
    return entry.frames.slice(1);
  }

  override disconnect(address: string): void {
    const pipe = this.pipes.find((p) => p.endpoint === address);
    super.disconnect(address);
    if (pipe === this.awaiting) this.awaiting = null;
  }
}

/** Receives requests fairly from its peers and sends each reply to the peer that asked. */
export class Reply extends Socket {
  readonly type = "REP" as const;
  private pending: { pipe: Pipe; envelope: Uint8Array[] } | null = null;

  protected override accept(_pipe: Pipe, frames: Uint8Array[]): boolean {
    if (frames.findIndex((f) => f.length === 0) < 0) {
      this.dropped++; // no envelope delimiter: not a request
      return false;
    }
    return true;
  }

  protected override xreceive(): Uint8Array[] | undefined {
    if (this.pending) throw new StateError("REP: send the reply to the previous request first");
    const entry = this.inbox.shift();
    if (!entry) return undefined;
    entry.pipe.consumed();
    const split = entry.frames.findIndex((f) => f.length === 0) + 1;
    this.pending = { pipe: entry.pipe, envelope: entry.frames.slice(0, split) };
    return entry.frames.slice(split);
  }

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    if (!this.pending) throw new StateError("REP: receive a request first");
    const { pipe, envelope } = this.pending;
    this.pending = null;
    // The asker is gone or full: the reply is dropped, as libzmq does.
    if (!this.pipes.includes(pipe) || !pipe.write([...envelope, ...frames])) this.dropped++;
  }
}

/** Load-balances sends and fair-queues receives, without envelopes. */
export class Dealer extends Socket {
  readonly type = "DEALER" as const;
  private readonly lb = new LoadBalancer();

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    const pipe = await this.waitUntil(() => this.lb.pick(this.pipes), this.sendTimeout);
    pipe.write(frames);
  }
}

export interface RouterOptions extends SocketOptions {
  /** Fail sends to unknown routing ids (EHOSTUNREACH) and wait for room instead of dropping. */
  mandatory: boolean;
}

/** Prefixes each received message with the sending peer's routing id and routes sends by the first frame. */
export class Router extends Socket {
  readonly type = "ROUTER" as const;
  mandatory = false;
  private nextId = (Math.random() * 0xffffffff) >>> 0;

  constructor(options: Partial<RouterOptions> = {}) {
    const { mandatory, ...rest } = options;
    super(rest);
    if (mandatory !== undefined) this.mandatory = mandatory;
  }

  /** @internal */
  override pipeReady(pipe: Pipe): void {
    const identity = pipe.peer?.get("identity");
    const taken = (id: Uint8Array) => this.pipes.some((p) => p !== pipe && p.routingId && equalBytes(p.routingId, id));
    if (identity && identity.length > 0 && !taken(identity)) {
      pipe.routingId = identity;
    } else {
      // libzmq's generated ids: a zero byte and a 32-bit counter.
      const id = new Uint8Array(5);
      new DataView(id.buffer).setUint32(1, this.nextId++);
      pipe.routingId = id;
    }
    super.pipeReady(pipe);
  }

  /** @internal */
  override pipeDown(pipe: Pipe): void {
    pipe.routingId = null;
    super.pipeDown(pipe);
  }

  protected override accept(pipe: Pipe, frames: Uint8Array[]): boolean {
    // The id is taken at arrival: messages that came before a disconnect keep their sender's id.
    frames.unshift(pipe.routingId!);
    return true;
  }

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    const id = frames[0]!;
    const find = () => this.pipes.find((p) => p.ready && p.routingId !== null && equalBytes(p.routingId, id));
    const pipe = find();
    if (!pipe) {
      if (this.mandatory) throw new HostUnreachableError(`no peer with routing id ${JSON.stringify(latin1(id))}`);
      this.dropped++;
      return;
    }
    if (pipe.write(frames.slice(1))) return;
    if (!this.mandatory) {
      this.dropped++;
      return;
    }
    const target = await this.waitUntil(() => {
      const p = find();
      if (!p) throw new HostUnreachableError("the peer went away");
      return p.writable ? p : undefined;
    }, this.sendTimeout);
    target.write(frames.slice(1));
  }
}

/** Sends each message to every peer subscribed to a prefix of its first frame; never blocks. */
export class Publisher extends Socket {
  readonly type = "PUB" as const;

  override receive(): Promise<Uint8Array[]> {
    return Promise.reject(new NotSupportedError("PUB sockets cannot receive"));
  }

  /** @internal */
  override pipeSubscription(pipe: Pipe, topic: Uint8Array, subscribe: boolean): void {
    count(pipe.subscriptions, latin1(topic), subscribe ? 1 : -1);
  }

  protected override accept(pipe: Pipe, frames: Uint8Array[]): boolean {
    // RFC 45: a subscription is a message of 0x01 (0x00 cancels) and the topic; others are ignored.
    const body = frames[0]!;
    if (frames.length === 1 && body.length > 0 && (body[0] === 0 || body[0] === 1)) {
      this.pipeSubscription(pipe, body.subarray(1), body[0] === 1);
    }
    return false;
  }

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    const topic = frames[0]!;
    for (const pipe of this.pipes) {
      if (!pipe.ready || !matches(pipe.subscriptions, topic)) continue;
      if (!pipe.write(frames)) this.dropped++;
    }
  }
}

/** Receives what its publishers send for the topics it subscribed to. */
export class Subscriber extends Socket {
  readonly type = "SUB" as const;
  private readonly topics = new Map<string, number>();
  private readonly topicBytes = new Map<string, Uint8Array>();

  /** Subscribes to each topic prefix; no argument subscribes to everything. */
  subscribe(...topics: MessageLike[]): void {
    this.checkOpen();
    for (const topic of topics.length ? topics : [""]) this.change(toFrame(topic), 1);
  }

  /** Cancels one subscribe() of each topic; no argument cancels the subscription to everything. */
  unsubscribe(...topics: MessageLike[]): void {
    this.checkOpen();
    for (const topic of topics.length ? topics : [""]) this.change(toFrame(topic), -1);
  }

  private change(topic: Uint8Array, delta: 1 | -1): void {
    const key = latin1(topic);
    if (!count(this.topics, key, delta)) return;
    if (delta === 1) this.topicBytes.set(key, topic.slice());
    else this.topicBytes.delete(key);
    for (const pipe of this.pipes) pipe.sendSubscription(topic, delta === 1);
  }

  /** @internal */
  override pipeReady(pipe: Pipe): void {
    for (const topic of this.topicBytes.values()) pipe.sendSubscription(topic, true);
    super.pipeReady(pipe);
  }

  protected override accept(_pipe: Pipe, frames: Uint8Array[]): boolean {
    return matches(this.topics, frames[0]!);
  }
}

/** Load-balances messages over its peers; waits when all are full. */
export class Push extends Socket {
  readonly type = "PUSH" as const;
  private readonly lb = new LoadBalancer();

  override receive(): Promise<Uint8Array[]> {
    return Promise.reject(new NotSupportedError("PUSH sockets cannot receive"));
  }

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    const pipe = await this.waitUntil(() => this.lb.pick(this.pipes), this.sendTimeout);
    pipe.write(frames);
  }
}

/** Receives fairly from its peers. */
export class Pull extends Socket {
  readonly type = "PULL" as const;
}

/** One peer, both directions. */
export class Pair extends Socket {
  readonly type = "PAIR" as const;

  override connect(address: string): void {
    if (this.pipes.length > 0) throw new InvalidError("a PAIR socket connects to one peer only");
    super.connect(address);
  }

  protected override acceptsPeer(): boolean {
    return this.pipes.length === 0;
  }

  protected override async xsend(frames: Uint8Array[]): Promise<void> {
    const pipe = await this.waitUntil(() => (this.pipes[0]?.writable ? this.pipes[0] : undefined), this.sendTimeout);
    pipe.write(frames);
  }
}
