/**
 * The part of the WHATWG WebSocket interface this package uses. The browser's WebSocket and the
 * `ws` package's (Node) both have it; `#websocket` picks the runtime's constructor.
 */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  readonly protocol: string;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  /** Node (`ws`) only: stop and restart reading, for receive back-pressure. */
  pause?(): void;
  resume?(): void;
}

/** Node only (ignored in browsers, where the browser's trust store decides): TLS for wss://. */
export interface TlsOptions {
  /** PEM trust anchors for the server's certificate (like ZMQ_WSS_TRUST_PEM). */
  ca?: string | string[];
  /** The name to verify the certificate against (like ZMQ_WSS_HOSTNAME). */
  servername?: string;
  /** false accepts any certificate: for tests only. */
  rejectUnauthorized?: boolean;
}

export type OpenWebSocket = (url: string, protocols: string[], tls: TlsOptions | undefined) => WebSocketLike;

/** A bind()'s listening endpoint. */
export interface Listener {
  /** The bound address with its real port (what zeromq.js calls lastEndpoint). */
  readonly address: string;
  close(): void;
}

/** Node only: TLS key and certificate for a wss:// bind, PEM. */
export interface ServerTlsOptions {
  key?: string;
  cert?: string;
}
