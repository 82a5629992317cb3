/** Z85 (ZeroMQ RFC 32): the printable encoding of CURVE keys, 5 characters per 4 bytes. */
import { InvalidError } from "./errors.js";

const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
const DECODE = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DECODE[ALPHABET.charCodeAt(i)] = i;

/** Encodes bytes whose length is a multiple of 4. */
export function z85Encode(data: Uint8Array): string {
  if (data.length % 4 !== 0) throw new InvalidError("z85: length must be a multiple of 4");
  let out = "";
  for (let i = 0; i < data.length; i += 4) {
    let value = ((data[i]! << 24) | (data[i + 1]! << 16) | (data[i + 2]! << 8) | data[i + 3]!) >>> 0;
    let chunk = "";
    for (let j = 0; j < 5; j++) {
      chunk = ALPHABET[value % 85]! + chunk;
      value = Math.floor(value / 85);
    }
    out += chunk;
  }
  return out;
}

/** Decodes a Z85 string whose length is a multiple of 5; throws InvalidError on bad input. */
export function z85Decode(text: string): Uint8Array {
  if (text.length % 5 !== 0) throw new InvalidError("z85: length must be a multiple of 5");
  const out = new Uint8Array((text.length / 5) * 4);
  for (let i = 0, o = 0; i < text.length; i += 5, o += 4) {
    let value = 0;
    for (let j = 0; j < 5; j++) {
      const code = text.charCodeAt(i + j);
      const digit = code < 128 ? DECODE[code]! : -1;
      if (digit < 0) throw new InvalidError(`z85: bad character ${JSON.stringify(text[i + j])}`);
      value = value * 85 + digit;
    }
    if (value > 0xffffffff) throw new InvalidError("z85: group out of range");
    out[o] = value >>> 24;
    out[o + 1] = (value >>> 16) & 0xff;
    out[o + 2] = (value >>> 8) & 0xff;
    out[o + 3] = value & 0xff;
  }
  return out;
}
