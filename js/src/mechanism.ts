/**
 * Client sides of the ZMTP security handshakes a ZWS connection runs after the WebSocket
 * upgrade (RFC 45 names them in Sec-WebSocket-Protocol: ZWS2.0/NULL, ZWS2.0/PLAIN, ZWS2.0/CURVE).
 * Each mechanism is a state machine over command bodies: no sockets, no clock. CURVE is in curve.ts.
 */
import { AuthError, ProtocolError } from "./errors.js";
import { type Frame, type Properties, ascii, decodeCommand, decodeProperties, encodeCommand, encodeProperties, text } from "./wire.js";

export type MechanismName = "NULL" | "PLAIN" | "CURVE";

export interface HandshakeStep {
  /** Command bodies to send, in order. */
  send: Uint8Array[];
  /** Set when the handshake is complete: the peer's metadata (keys lower-case). */
  peer?: Properties;
}

export interface Mechanism {
  readonly name: MechanismName;
  /** Command bodies to send as soon as the WebSocket is open. */
  start(): Uint8Array[];
  /** A command frame from the peer during the handshake. Throws ProtocolError or AuthError. */
  onCommand(body: Uint8Array): HandshakeStep;
  /** An outgoing frame after the handshake (CURVE boxes it into a MESSAGE). */
  encode(frame: Frame): Frame;
  /** An incoming frame after the handshake (CURVE opens the MESSAGE box). */
  decode(frame: Frame): Frame;
}

/** The reason an ERROR command carries, as an AuthError (a server refusing us is an auth failure). */
export function errorCommand(data: Uint8Array, mechanism: MechanismName): AuthError {
  const len = data[0] ?? 0;
  const reason = data.length >= 1 + len ? text(data.subarray(1, 1 + len)) : "";
  return new AuthError(`${mechanism} handshake refused by the peer${reason ? `: ${reason}` : ""}`);
}

function unexpected(mechanism: MechanismName, name: string, state: string): ProtocolError {
  return new ProtocolError(`${mechanism}: unexpected ${name} command while ${state}`);
}

/** NULL (RFC 23): both sides send READY with their metadata. */
export class NullMechanism implements Mechanism {
  readonly name = "NULL" as const;
  private done = false;
  constructor(private readonly own: Properties) {}

  start(): Uint8Array[] {
    return [encodeCommand("READY", encodeProperties(this.own))];
  }

  onCommand(body: Uint8Array): HandshakeStep {
    const cmd = decodeCommand(body);
    if (cmd.name === "ERROR") throw errorCommand(cmd.data, this.name);
    if (cmd.name !== "READY" || this.done) throw unexpected(this.name, cmd.name, "waiting for READY");
    this.done = true;
    return { send: [], peer: decodeProperties(cmd.data) };
  }

  encode(frame: Frame): Frame {
    return frame;
  }
  decode(frame: Frame): Frame {
    return frame;
  }
}

/** PLAIN client (RFC 24): HELLO(user, password), WELCOME, INITIATE(metadata), READY(metadata). */
export class PlainClientMechanism implements Mechanism {
  readonly name = "PLAIN" as const;
  private state: "welcome" | "ready" | "done" = "welcome";
  constructor(
    private readonly own: Properties,
    private readonly username: string,
    private readonly password: string,
  ) {}

  start(): Uint8Array[] {
    const user = ascii(this.username);
    const pass = ascii(this.password);
    if (user.length > 255 || pass.length > 255) throw new ProtocolError("PLAIN: username and password are at most 255 bytes");
    const data = new Uint8Array(2 + user.length + pass.length);
    data[0] = user.length;
    data.set(user, 1);
    data[1 + user.length] = pass.length;
    data.set(pass, 2 + user.length);
    return [encodeCommand("HELLO", data)];
  }

  onCommand(body: Uint8Array): HandshakeStep {
    // libzmq 4.3.5's PLAIN server writes its ERROR name as "\x05ERROR" in C, where the hex escape
    // swallows the E: the command arrives as "^RROR" (0x5e and "RROR") with no length byte.
    if (body.length >= 5 && text(body.subarray(0, 5)) === "^RROR") throw errorCommand(body.subarray(5), this.name);
    const cmd = decodeCommand(body);
    if (cmd.name === "ERROR") throw errorCommand(cmd.data, this.name);
    if (this.state === "welcome" && cmd.name === "WELCOME") {
      if (cmd.data.length !== 0) throw new ProtocolError("PLAIN: WELCOME has a body");
      this.state = "ready";
      return { send: [encodeCommand("INITIATE", encodeProperties(this.own))] };
    }
    if (this.state === "ready" && cmd.name === "READY") {
      this.state = "done";
      return { send: [], peer: decodeProperties(cmd.data) };
    }
    throw unexpected(this.name, cmd.name, `waiting for ${this.state.toUpperCase()}`);
  }

  encode(frame: Frame): Frame {
    return frame;
  }
  decode(frame: Frame): Frame {
    return frame;
  }
}

/** Decides a PLAIN client's credentials on a bound socket; true lets it in. */
export type PlainAuthenticator = (username: string, password: string) => boolean;

/**
 * PLAIN server (RFC 24) for bind(): HELLO, then WELCOME or ERROR by the authenticator's answer
 * (everyone is let in without one, as libzmq without a ZAP handler), INITIATE, READY. The peer's
 * properties gain "user-id" (the username), as libzmq sets User-Id.
 */
export class PlainServerMechanism implements Mechanism {
  readonly name = "PLAIN" as const;
  private state: "hello" | "initiate" | "done" = "hello";
  private username = "";
  constructor(
    private readonly own: Properties,
    private readonly authenticate: PlainAuthenticator | undefined,
  ) {}

  start(): Uint8Array[] {
    return [];
  }

  onCommand(body: Uint8Array): HandshakeStep {
    const cmd = decodeCommand(body);
    if (this.state === "hello" && cmd.name === "HELLO") {
      const d = cmd.data;
      const ulen = d[0] ?? 0;
      const plen = d[1 + ulen];
      if (d.length < 1 || plen === undefined || d.length !== 2 + ulen + plen) throw new ProtocolError("PLAIN: malformed HELLO");
      this.username = text(d.subarray(1, 1 + ulen));
      const password = text(d.subarray(2 + ulen));
      if (this.authenticate && !this.authenticate(this.username, password)) {
        throw new RefusedHandshake(encodeCommand("ERROR", errorReason("400")), new AuthError(`PLAIN: refused user ${JSON.stringify(this.username)}`));
      }
      this.state = "initiate";
      return { send: [encodeCommand("WELCOME")] };
    }
    if (this.state === "initiate" && cmd.name === "INITIATE") {
      const peer = decodeProperties(cmd.data);
      peer.set("user-id", ascii(this.username));
      this.state = "done";
      return { send: [encodeCommand("READY", encodeProperties(this.own))], peer };
    }
    throw unexpected(this.name, cmd.name, `waiting for ${this.state.toUpperCase()}`);
  }

  encode(frame: Frame): Frame {
    return frame;
  }
  decode(frame: Frame): Frame {
    return frame;
  }
}

/** An ERROR command's data: the reason's length and the reason. */
export function errorReason(reason: string): Uint8Array {
  const r = ascii(reason);
  const out = new Uint8Array(1 + r.length);
  out[0] = r.length;
  out.set(r, 1);
  return out;
}

/** A handshake the server ends: `reply` (an ERROR command) goes to the peer before the close. */
export class RefusedHandshake extends Error {
  constructor(
    readonly reply: Uint8Array,
    readonly error: AuthError,
  ) {
    super(error.message);
  }
}
