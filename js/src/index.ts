/**
 * ZeroMQ sockets over WebSocket (ZWS 2.0, ZeroMQ RFC 45) for browsers and Node, in the shape of
 * zeromq.js v6: `const s = new Request(); s.connect("ws://host:port/path"); await s.send("hi");
 * const [reply] = await s.receive();`. Clients only: they connect to a ZeroMQ peer that binds a
 * ws:// or wss:// endpoint (libzmq built with drafts, oxmq).
 */
export { Request, Reply, Dealer, Router, Publisher, Subscriber, Push, Pull, Pair, type RouterOptions } from "./sockets.js";
export { Socket, SocketEvents, type SocketEvent, type SocketOptions, type MessageLike } from "./socket.js";
export { curveKeyPair, curvePublicKey, type CurveKey } from "./curve.js";
export { z85Encode, z85Decode } from "./z85.js";
export type { TlsOptions } from "./websocket.js";
export {
  ZmqError,
  AgainError,
  TermError,
  StateError,
  ProtocolError,
  AuthError,
  BusyError,
  InvalidError,
  NotSupportedError,
  HostUnreachableError,
  MessageSizeError,
  ConnectError,
  type ErrorCode,
} from "./errors.js";

import { Dealer, Pair, Publisher, Pull, Push, Reply, Request, Router, Subscriber } from "./sockets.js";
/** zeromq.js's short names. */
export { Request as Req, Reply as Rep, Publisher as Pub, Subscriber as Sub };
/** All socket classes by libzmq type name. */
export const socketTypes = { REQ: Request, REP: Reply, DEALER: Dealer, ROUTER: Router, PUB: Publisher, SUB: Subscriber, PUSH: Push, PULL: Pull, PAIR: Pair } as const;
