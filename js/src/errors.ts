/**
 * Errors raised by this package. Each has a `code` naming the libzmq errno it stands for, as
 * zeromq.js does (`err.code === "EAGAIN"`), and is an instance of a class per code so callers
 * can also test with `instanceof`.
 */
export type ErrorCode =
  | "EAGAIN"
  | "ETERM"
  | "EFSM"
  | "EPROTO"
  | "EBUSY"
  | "EINVAL"
  | "ENOTSUP"
  | "EHOSTUNREACH"
  | "EACCES"
  | "EMSGSIZE"
  | "ECONNREFUSED";

export class ZmqError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

/** A send or receive did not complete within its timeout (`sendTimeout`, `receiveTimeout`). */
export class AgainError extends ZmqError {
  constructor(message = "Operation timed out") {
    super("EAGAIN", message);
  }
}

/** The socket was closed (before or during the call). */
export class TermError extends ZmqError {
  constructor(message = "Socket is closed") {
    super("ETERM", message);
  }
}

/** The call is not allowed in the socket's current state (REQ sending twice, REP replying without a request). */
export class StateError extends ZmqError {
  constructor(message: string) {
    super("EFSM", message);
  }
}

/** The peer broke ZWS/ZMTP (bad frame, bad command, wrong socket type, bad CURVE box). */
export class ProtocolError extends ZmqError {
  constructor(message: string) {
    super("EPROTO", message);
  }
}

/** The peer refused our credentials (a ZMTP ERROR command during the handshake). */
export class AuthError extends ZmqError {
  constructor(message: string) {
    super("EACCES", message);
  }
}

/** Another send (or receive) is already waiting on this socket; zeromq.js allows one at a time. */
export class BusyError extends ZmqError {
  constructor(message: string) {
    super("EBUSY", message);
  }
}

/** A bad argument: an endpoint, a key, an option value. */
export class InvalidError extends ZmqError {
  constructor(message: string) {
    super("EINVAL", message);
  }
}

/** The socket type does not do this (receive on PUB, send on SUB). */
export class NotSupportedError extends ZmqError {
  constructor(message: string) {
    super("ENOTSUP", message);
  }
}

/** ROUTER with `mandatory` set: no connected peer has that routing id. */
export class HostUnreachableError extends ZmqError {
  constructor(message = "Host unreachable") {
    super("EHOSTUNREACH", message);
  }
}

/** A frame larger than `maxMessageSize`. */
export class MessageSizeError extends ZmqError {
  constructor(message: string) {
    super("EMSGSIZE", message);
  }
}

/** The WebSocket did not open: nothing listens, the upgrade was refused, TLS failed. */
export class ConnectError extends ZmqError {
  constructor(message: string) {
    super("ECONNREFUSED", message);
  }
}
