/** `#websocket` in browsers (and any runtime with a global WebSocket): the platform's WebSocket. */
import { InvalidError } from "./errors.js";
import type { TlsOptions, WebSocketLike } from "./websocket.js";

export function openWebSocket(url: string, protocols: string[], _tls: TlsOptions | undefined): WebSocketLike {
  const Ctor = (globalThis as { WebSocket?: new (url: string, protocols: string[]) => WebSocketLike }).WebSocket;
  if (!Ctor) throw new InvalidError("this runtime has no global WebSocket");
  const ws = new Ctor(url, protocols);
  ws.binaryType = "arraybuffer";
  return ws;
}

/**
 * Browsers accept only RFC 2616 tokens as subprotocol names, so "ZWS2.0/NULL" (with its "/")
 * cannot be offered: a browser connects as "ZWS2.0", RFC 45's mode without a mechanism.
 */
export const namesMechanisms = false;
