/**
 * ZWS 2.0 framing (ZeroMQ RFC 45) and the ZMTP 3.x command and metadata encodings it carries.
 * One WebSocket binary message is one ZeroMQ frame: a flags byte (0x01 more, 0x02 command)
 * followed by the frame's body. Pure functions over bytes: no sockets, no clock.
 */
import { ProtocolError } from "./errors.js";

export const FLAG_MORE = 0x01;
export const FLAG_COMMAND = 0x02;

export interface Frame {
  flags: number;
  body: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function ascii(text: string): Uint8Array {
  return encoder.encode(text);
}

export function text(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

export function concat(parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** One WebSocket message for a frame. */
export function encodeFrame(flags: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length + 1);
  out[0] = flags;
  out.set(body, 1);
  return out;
}

/** The frame a WebSocket message carries; an empty message or unknown flag bits are a protocol error. */
export function decodeFrame(message: Uint8Array): Frame {
  if (message.length === 0) throw new ProtocolError("ZWS: empty WebSocket message (no flags byte)");
  const flags = message[0]!;
  if ((flags & ~(FLAG_MORE | FLAG_COMMAND)) !== 0) throw new ProtocolError(`ZWS: unknown frame flags 0x${flags.toString(16)}`);
  if (flags & FLAG_COMMAND && flags & FLAG_MORE) throw new ProtocolError("ZWS: a command frame cannot have MORE set");
  return { flags, body: message.subarray(1) };
}

/** A command body: its name's length, the name, then the data. */
export function encodeCommand(name: string, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const n = ascii(name);
  const out = new Uint8Array(1 + n.length + data.length);
  out[0] = n.length;
  out.set(n, 1);
  out.set(data, 1 + n.length);
  return out;
}

export interface Command {
  name: string;
  data: Uint8Array;
}

export function decodeCommand(body: Uint8Array): Command {
  if (body.length < 1 || body[0]! === 0 || body.length < 1 + body[0]!) throw new ProtocolError("ZMTP: malformed command");
  const len = body[0]!;
  return { name: text(body.subarray(1, 1 + len)), data: body.subarray(1 + len) };
}

/** ZMTP metadata: properties as name-length, name, 4-byte big-endian value length, value. */
export type Properties = Map<string, Uint8Array>;

export function encodeProperties(props: Properties): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [name, value] of props) {
    const n = ascii(name);
    if (n.length === 0 || n.length > 255) throw new ProtocolError(`ZMTP: bad property name ${JSON.stringify(name)}`);
    const head = new Uint8Array(1 + n.length + 4);
    head[0] = n.length;
    head.set(n, 1);
    new DataView(head.buffer).setUint32(1 + n.length, value.length);
    parts.push(head, value);
  }
  return concat(parts);
}

/** Property names compare case-insensitively (RFC 23); keys are stored lower-case. */
export function decodeProperties(data: Uint8Array): Properties {
  const props: Properties = new Map();
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  while (at < data.length) {
    const nlen = data[at]!;
    if (nlen === 0 || at + 1 + nlen + 4 > data.length) throw new ProtocolError("ZMTP: malformed metadata");
    const name = text(data.subarray(at + 1, at + 1 + nlen)).toLowerCase();
    const vlen = view.getUint32(at + 1 + nlen);
    const start = at + 1 + nlen + 4;
    if (start + vlen > data.length) throw new ProtocolError("ZMTP: malformed metadata value");
    props.set(name, data.slice(start, start + vlen));
    at = start + vlen;
  }
  return props;
}
