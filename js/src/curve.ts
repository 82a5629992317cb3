/**
 * CurveZMQ (ZeroMQ RFC 26) client handshake and message boxes, over NaCl's crypto_box built from
 * @noble/curves (X25519) and @noble/ciphers (HSalsa20, XSalsa20-Poly1305). Wire layouts follow
 * RFC 26 and libzmq 4.3.5's curve_client.cpp: HELLO 200 bytes, WELCOME 168, INITIATE 257 + metadata,
 * READY 30 + metadata, MESSAGE 33 + payload. Each MESSAGE travels as a ZWS frame with flags 0; its
 * own MORE/COMMAND flags are inside the box (libzmq ORs the outer flags into the opened message).
 */
import { x25519 } from "@noble/curves/ed25519.js";
import { hsalsa, xsalsa20poly1305 } from "@noble/ciphers/salsa.js";
import { randomBytes } from "@noble/ciphers/utils.js";
import { AuthError, InvalidError, ProtocolError } from "./errors.js";
import { type HandshakeStep, type Mechanism, RefusedHandshake, errorCommand, errorReason } from "./mechanism.js";
import { type Frame, type Properties, ascii, concat, decodeCommand, decodeProperties, encodeCommand, encodeProperties, equalBytes } from "./wire.js";
import { z85Decode, z85Encode } from "./z85.js";

export type CurveKey = string | Uint8Array;

/** A 32-byte key from Z85 text (40 characters) or bytes. */
export function curveKeyBytes(key: CurveKey, what: string): Uint8Array {
  const bytes = typeof key === "string" ? (key.length === 40 ? z85Decode(key) : null) : key;
  if (!bytes || bytes.length !== 32) throw new InvalidError(`${what} must be 32 bytes or 40 characters of Z85`);
  return bytes;
}

/** A new long-term key pair, Z85-encoded, as zeromq.js's curveKeyPair() returns it. */
export function curveKeyPair(): { publicKey: string; secretKey: string } {
  const secret = x25519.utils.randomSecretKey();
  return { publicKey: z85Encode(x25519.getPublicKey(secret)), secretKey: z85Encode(secret) };
}

/** The public key of a secret key (zmq_curve_public). */
export function curvePublicKey(secretKey: CurveKey): string {
  return z85Encode(x25519.getPublicKey(curveKeyBytes(secretKey, "secret key")));
}

const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

function words(bytes: Uint8Array): Uint32Array {
  const out = new Uint32Array(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
}

/** crypto_box_beforenm: HSalsa20 of the X25519 shared secret. */
function precompute(publicKey: Uint8Array, secretKey: Uint8Array): Uint8Array {
  let shared: Uint8Array;
  try {
    shared = x25519.getSharedSecret(secretKey, publicKey);
  } catch {
    throw new ProtocolError("CURVE: peer key is a low-order point");
  }
  const out = new Uint32Array(8);
  hsalsa(SIGMA, words(shared), new Uint32Array(4), out);
  const key = new Uint8Array(32);
  const view = new DataView(key.buffer);
  for (let i = 0; i < 8; i++) view.setUint32(i * 4, out[i]!, true);
  return key;
}

function seal(key: Uint8Array, nonce: Uint8Array, plaintext: Uint8Array): Uint8Array {
  return xsalsa20poly1305(key, nonce).encrypt(plaintext);
}

function open(key: Uint8Array, nonce: Uint8Array, box: Uint8Array, what: string): Uint8Array {
  try {
    return xsalsa20poly1305(key, nonce).decrypt(box);
  } catch {
    throw new ProtocolError(`CURVE: ${what} box does not open`);
  }
}

function shortNonce(prefix: string, counter: bigint): { nonce: Uint8Array; wire: Uint8Array } {
  const wire = new Uint8Array(8);
  new DataView(wire.buffer).setBigUint64(0, counter);
  return { nonce: concat([ascii(prefix), wire]), wire };
}

export interface CurveClientKeys {
  serverKey: CurveKey;
  /** Long-term client keys; a fresh pair when absent (the server then sees an unknown key). */
  publicKey?: CurveKey;
  secretKey?: CurveKey;
}

export class CurveClientMechanism implements Mechanism {
  readonly name = "CURVE" as const;
  private readonly serverKey: Uint8Array;
  private readonly publicKey: Uint8Array;
  private readonly secretKey: Uint8Array;
  private readonly transientSecret = x25519.utils.randomSecretKey();
  private readonly transientPublic = x25519.getPublicKey(this.transientSecret);
  private sessionKey: Uint8Array | null = null;
  private nonce = 1n;
  private peerNonce = 0n;
  private state: "welcome" | "ready" | "done" = "welcome";

  constructor(
    private readonly own: Properties,
    keys: CurveClientKeys,
  ) {
    this.serverKey = curveKeyBytes(keys.serverKey, "curveServerKey");
    if (keys.secretKey !== undefined) {
      this.secretKey = curveKeyBytes(keys.secretKey, "curveSecretKey");
      this.publicKey = x25519.getPublicKey(this.secretKey);
      if (keys.publicKey !== undefined && !equalBytes(curveKeyBytes(keys.publicKey, "curvePublicKey"), this.publicKey))
        throw new InvalidError("curvePublicKey does not belong to curveSecretKey");
    } else {
      if (keys.publicKey !== undefined) throw new InvalidError("curvePublicKey is set without curveSecretKey");
      this.secretKey = x25519.utils.randomSecretKey();
      this.publicKey = x25519.getPublicKey(this.secretKey);
    }
  }

  start(): Uint8Array[] {
    const n = shortNonce("CurveZMQHELLO---", this.nonce++);
    const box = seal(precompute(this.serverKey, this.transientSecret), n.nonce, new Uint8Array(64));
    const data = concat([new Uint8Array([1, 0]), new Uint8Array(72), this.transientPublic, n.wire, box]);
    return [encodeCommand("HELLO", data)];
  }

  onCommand(body: Uint8Array): HandshakeStep {
    const cmd = decodeCommand(body);
    if (cmd.name === "ERROR") throw errorCommand(cmd.data, this.name);
    if (this.state === "welcome" && cmd.name === "WELCOME") return this.welcome(cmd.data);
    if (this.state === "ready" && cmd.name === "READY") return this.ready(cmd.data);
    throw new ProtocolError(`CURVE: unexpected ${cmd.name} command while waiting for ${this.state.toUpperCase()}`);
  }

  private welcome(data: Uint8Array): HandshakeStep {
    if (data.length !== 160) throw new ProtocolError("CURVE: WELCOME has the wrong size");
    const plain = open(precompute(this.serverKey, this.transientSecret), concat([ascii("WELCOME-"), data.subarray(0, 16)]), data.subarray(16), "WELCOME");
    const serverTransient = plain.subarray(0, 32);
    const cookie = plain.subarray(32, 128);
    this.sessionKey = precompute(serverTransient, this.transientSecret);

    const vouchNonce = randomBytes(16);
    const vouch = seal(precompute(serverTransient, this.secretKey), concat([ascii("VOUCH---"), vouchNonce]), concat([this.transientPublic, this.serverKey]));
    const n = shortNonce("CurveZMQINITIATE", this.nonce++);
    const box = seal(this.sessionKey, n.nonce, concat([this.publicKey, vouchNonce, vouch, encodeProperties(this.own)]));
    this.state = "ready";
    return { send: [encodeCommand("INITIATE", concat([cookie, n.wire, box]))] };
  }

  private ready(data: Uint8Array): HandshakeStep {
    if (data.length < 8 + 16) throw new ProtocolError("CURVE: READY is too short");
    const wire = data.subarray(0, 8);
    this.checkPeerNonce(wire);
    const plain = open(this.sessionKey!, concat([ascii("CurveZMQREADY---"), wire]), data.subarray(8), "READY");
    this.state = "done";
    return { send: [], peer: decodeProperties(plain) };
  }

  private checkPeerNonce(wire: Uint8Array): void {
    const value = new DataView(wire.buffer, wire.byteOffset, 8).getBigUint64(0);
    if (value <= this.peerNonce) throw new ProtocolError("CURVE: peer nonce did not increase");
    this.peerNonce = value;
  }

  encode(frame: Frame): Frame {
    const n = shortNonce("CurveZMQMESSAGEC", this.nonce++);
    const plain = new Uint8Array(1 + frame.body.length);
    plain[0] = frame.flags;
    plain.set(frame.body, 1);
    return { flags: 0, body: concat([MESSAGE, n.wire, seal(this.sessionKey!, n.nonce, plain)]) };
  }

  decode(frame: Frame): Frame {
    const body = frame.body;
    if (body.length < MESSAGE.length + 8 + 17 || !equalBytes(body.subarray(0, MESSAGE.length), MESSAGE)) {
      const cmd = body.length > 0 ? decodeCommand(body) : null;
      if (cmd?.name === "ERROR") throw errorCommand(cmd.data, this.name);
      throw new ProtocolError("CURVE: expected a MESSAGE");
    }
    const wire = body.subarray(MESSAGE.length, MESSAGE.length + 8);
    this.checkPeerNonce(wire);
    const plain = open(this.sessionKey!, concat([ascii("CurveZMQMESSAGES"), wire]), body.subarray(MESSAGE.length + 8), "MESSAGE");
    const flags = plain[0]!;
    if ((flags & ~0x03) !== 0) throw new ProtocolError("CURVE: unknown flags inside a MESSAGE");
    return { flags, body: plain.subarray(1) };
  }
}

const MESSAGE = encodeCommand("MESSAGE");

/** Decides a CURVE client's long-term public key (Z85) on a bound socket; true lets it in. */
export type CurveAuthenticator = (publicKey: string) => boolean;

/**
 * CurveZMQ server side (RFC 26) for bind(): HELLO, WELCOME with a cookie boxed under a key of this
 * connection's own, INITIATE (cookie, vouch and the client's long-term key checked), READY. The
 * peer's properties gain "user-id", the client's public key in Z85, as libzmq's ZAP default.
 */
export class CurveServerMechanism implements Mechanism {
  readonly name = "CURVE" as const;
  private readonly secretKey: Uint8Array;
  private readonly publicKey: Uint8Array;
  private readonly transientSecret = x25519.utils.randomSecretKey();
  private readonly cookieKey = randomBytes(32);
  private clientTransient: Uint8Array | null = null;
  private sessionKey: Uint8Array | null = null;
  private nonce = 1n;
  private peerNonce = 0n;
  private state: "hello" | "initiate" | "done" = "hello";

  constructor(
    private readonly own: Properties,
    secretKey: CurveKey,
    private readonly authenticate: CurveAuthenticator | undefined,
  ) {
    this.secretKey = curveKeyBytes(secretKey, "curveSecretKey");
    this.publicKey = x25519.getPublicKey(this.secretKey);
  }

  start(): Uint8Array[] {
    return [];
  }

  onCommand(body: Uint8Array): HandshakeStep {
    const cmd = decodeCommand(body);
    if (this.state === "hello" && cmd.name === "HELLO") return this.hello(cmd.data);
    if (this.state === "initiate" && cmd.name === "INITIATE") return this.initiate(cmd.data);
    throw new ProtocolError(`CURVE: unexpected ${cmd.name} command while waiting for ${this.state.toUpperCase()}`);
  }

  private hello(data: Uint8Array): HandshakeStep {
    if (data.length !== 194) throw new ProtocolError("CURVE: HELLO has the wrong size");
    if (data[0] !== 1 || data[1] !== 0) throw new ProtocolError("CURVE: HELLO of an unknown version");
    const clientTransient = data.slice(74, 106);
    const wire = data.subarray(106, 114);
    this.checkPeerNonce(wire);
    const zeros = open(precompute(clientTransient, this.secretKey), concat([ascii("CurveZMQHELLO---"), wire]), data.subarray(114), "HELLO");
    if (zeros.length !== 64 || zeros.some((b) => b !== 0)) throw new ProtocolError("CURVE: HELLO signature is not zeros");
    this.clientTransient = clientTransient;
    const transientPublic = x25519.getPublicKey(this.transientSecret);
    const cookieNonce = randomBytes(16);
    const cookie = concat([cookieNonce, seal(this.cookieKey, concat([ascii("COOKIE--"), cookieNonce]), concat([clientTransient, this.transientSecret]))]);
    const welcomeNonce = randomBytes(16);
    const box = seal(precompute(clientTransient, this.secretKey), concat([ascii("WELCOME-"), welcomeNonce]), concat([transientPublic, cookie]));
    this.state = "initiate";
    return { send: [encodeCommand("WELCOME", concat([welcomeNonce, box]))] };
  }

  private initiate(data: Uint8Array): HandshakeStep {
    if (data.length < 96 + 8 + 16 + 128) throw new ProtocolError("CURVE: INITIATE is too short");
    const cookie = open(this.cookieKey, concat([ascii("COOKIE--"), data.subarray(0, 16)]), data.subarray(16, 96), "cookie");
    if (!equalBytes(cookie.subarray(0, 32), this.clientTransient!)) throw new ProtocolError("CURVE: cookie of another connection");
    const transientSecret = cookie.subarray(32, 64);
    const wire = data.subarray(96, 104);
    this.checkPeerNonce(wire);
    this.sessionKey = precompute(this.clientTransient!, transientSecret);
    const plain = open(this.sessionKey, concat([ascii("CurveZMQINITIATE"), wire]), data.subarray(104), "INITIATE");
    const clientKey = plain.subarray(0, 32);
    const vouch = open(precompute(clientKey, transientSecret), concat([ascii("VOUCH---"), plain.subarray(32, 48)]), plain.subarray(48, 128), "vouch");
    if (!equalBytes(vouch.subarray(0, 32), this.clientTransient!) || !equalBytes(vouch.subarray(32, 64), this.publicKey)) {
      throw new ProtocolError("CURVE: the vouch does not match this connection");
    }
    const peer = decodeProperties(plain.subarray(128));
    const id = z85Encode(clientKey);
    if (this.authenticate && !this.authenticate(id)) {
      throw new RefusedHandshake(encodeCommand("ERROR", errorReason("400")), new AuthError(`CURVE: refused client key ${id}`));
    }
    peer.set("user-id", ascii(id));
    const n = shortNonce("CurveZMQREADY---", this.nonce++);
    this.state = "done";
    return { send: [encodeCommand("READY", concat([n.wire, seal(this.sessionKey, n.nonce, encodeProperties(this.own))]))], peer };
  }

  private checkPeerNonce(wire: Uint8Array): void {
    const value = new DataView(wire.buffer, wire.byteOffset, 8).getBigUint64(0);
    if (value <= this.peerNonce) throw new ProtocolError("CURVE: peer nonce did not increase");
    this.peerNonce = value;
  }

  encode(frame: Frame): Frame {
    const n = shortNonce("CurveZMQMESSAGES", this.nonce++);
    const plain = new Uint8Array(1 + frame.body.length);
    plain[0] = frame.flags;
    plain.set(frame.body, 1);
    return { flags: 0, body: concat([MESSAGE, n.wire, seal(this.sessionKey!, n.nonce, plain)]) };
  }

  decode(frame: Frame): Frame {
    const body = frame.body;
    if (body.length < MESSAGE.length + 8 + 17 || !equalBytes(body.subarray(0, MESSAGE.length), MESSAGE)) {
      throw new ProtocolError("CURVE: expected a MESSAGE");
    }
    const wire = body.subarray(MESSAGE.length, MESSAGE.length + 8);
    this.checkPeerNonce(wire);
    const plain = open(this.sessionKey!, concat([ascii("CurveZMQMESSAGEC"), wire]), body.subarray(MESSAGE.length + 8), "MESSAGE");
    const flags = plain[0]!;
    if ((flags & ~0x03) !== 0) throw new ProtocolError("CURVE: unknown flags inside a MESSAGE");
    return { flags, body: plain.subarray(1) };
  }
}
