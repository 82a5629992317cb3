/** `#websocket` in browsers (and any runtime with a global WebSocket): the platform's WebSocket. */
import { InvalidError, NotSupportedError } from "./errors.js";
import type { Listener, ServerTlsOptions, TlsOptions, WebSocketLike } from "./websocket.js";
export type { Listener } from "./websocket.js";

export function openWebSocket(url: string, protocols: string[], _tls: TlsOptions | undefined): WebSocketLike {
  const Ctor = (globalThis as { WebSocket?: new (url: string, protocols: string[]) => WebSocketLike }).WebSocket;
  if (!Ctor) throw new InvalidError("this runtime has no global WebSocket");
  const ws = new Ctor(url, protocols);
  ws.binaryType = "arraybuffer";
  return ws;
}

/**
 * Browsers accept only RFC 2616 tokens as subprotocol names, so "ZWS2.0/NULL" (with its "/")
 * cannot be offered: a browser offers "ZWS2.0-NULL" (oxmq's browser-safe name) and "ZWS2.0"
 * (RFC 45's mode without a mechanism, which libzmq takes), and for PLAIN and CURVE
 * "ZWS2.0-PLAIN" and "ZWS2.0-CURVE", which only oxmq's servers (and this package's) take.
 */
export const namesMechanisms = false;

/** Browsers cannot accept connections. */
export function listen(
  _address: string,
  _choose: (offered: string[]) => string | null,
  _accept: (ws: WebSocketLike) => void,
  _tls: ServerTlsOptions | undefined,
): Promise<Listener> {
  return Promise.reject(new NotSupportedError("bind() needs Node: a browser cannot accept connections"));
}
