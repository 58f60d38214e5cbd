// Starts an HTTP server on "host:port" and stops it gracefully: stop accepting, let in-flight
// requests finish within the grace period, then cut what is left. Requests Node's parser refuses
// before any handler sees them get the service's error envelope too, not a bare status line.
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';

/**
 * The most the request line and headers may take together. Set here, not left to Node's default,
 * which `--max-http-header-size` (in NODE_OPTIONS too) changes: the limit clients are told about must
 * be the one enforced. Requests here are GETs with a token and a few filters, far below it.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

export interface Listener {
  /** The bound address, e.g. `127.0.0.1:8080` (the real port when 0 was asked). */
  address: string;
  server: Server;
  close(graceMs: number): Promise<void>;
}

export interface ListenOptions {
  /** A client must send its headers within this; a slowloris guard, as requests here are small GETs. */
  headersTimeoutMs?: number;
  /** ...and its whole request within this. */
  requestTimeoutMs?: number;
  /** How often Node looks for requests past those timeouts, so one may last up to this much longer. */
  timeoutCheckMs?: number;
}

export function splitHostPort(text: string): { host: string; port: number } {
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(at + 1)) };
}

export async function listen(handler: RequestListener, hostPort: string, options: ListenOptions = {}): Promise<Listener> {
  const { headersTimeoutMs = 10_000, requestTimeoutMs = 60_000, timeoutCheckMs = 30_000 } = options;
  // Responses still running when the drain starts must end with `Connection: close`; otherwise their
  // keep-alive sockets idle until the grace period runs out and every shutdown lasts the full grace.
  // Each is kept with its connection: a client error there must not be answered while one is owed.
  const open = new Map<ServerResponse, Duplex>();
  let draining = false;
  const server = createServer(
    // The strict parser is what refuses control bytes in the request line and headers; a lenient
    // one (--insecure-http-parser) would pass them on to the handlers and into the logs.
    { maxHeaderSize: MAX_HEADER_BYTES, insecureHTTPParser: false, connectionsCheckingInterval: timeoutCheckMs },
    (req, res) => {
      open.set(res, req.socket);
      res.once('close', () => open.delete(res));
      if (draining) res.shouldKeepAlive = false;
      handler(req, res);
    },
  );
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = requestTimeoutMs;
  server.keepAliveTimeout = 65_000; // above common load balancer idle timeouts (60 s)
  server.on('clientError', (error: ClientError, socket: Duplex) => {
    const owed = [...open.values()].includes(socket);
    answerClientError(error, socket, owed, { headersTimeoutMs, requestTimeoutMs });
  });
  const { host, port } = splitHostPort(hostPort);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const address = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  return {
    address,
    server,
    close(graceMs) {
      draining = true;
      for (const res of open.keys()) if (!res.headersSent) res.shouldKeepAlive = false;
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}

/** What Node passes to `clientError`: parse errors carry llhttp's `code` (HPE_…) and `reason`. */
type ClientError = Error & { code?: string; reason?: unknown };

/**
 * Answers a request Node could not read, then closes the connection: after a parse error nothing
 * later on it can be trusted to start at a request boundary. The listener of `clientError` owns the
 * socket, so every path ends it.
 */
function answerClientError(
  error: ClientError,
  socket: Duplex,
  responseOwed: boolean,
  timeouts: { headersTimeoutMs: number; requestTimeoutMs: number },
): void {
  // A reset peer reads nothing. `writable` is false once the socket has ended, so a second error on a
  // connection already answered (Node keeps feeding it what the client still sends) is never answered
  // twice. And while an earlier request on it still owes its response, an answer now would be read
  // as that one's: cutting the connection is the honest signal.
  if (error.code === 'ECONNRESET' || !socket.writable || responseOwed) {
    socket.destroy();
    return;
  }
  const { code, message } = describeClientError(error, timeouts);
  // `error.rawPacket` (what the client sent) is never echoed or logged: it holds the caller's
  // Authorization header, and the very bytes that were refused.
  socket.end(envelopeResponse(code, message), () => socket.destroy());
}

function describeClientError(
  error: ClientError,
  timeouts: { headersTimeoutMs: number; requestTimeoutMs: number },
): { code: ErrorCode; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      code: 'REQUEST_TOO_LARGE',
      message: `The request line and headers exceed ${MAX_HEADER_BYTES} bytes together; shorten the query string or the headers`,
    };
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const seconds = (ms: number) => `${ms / 1000} s`;
    return {
      code: 'REQUEST_TIMEOUT',
      message: `The request did not arrive in time: headers are due within ` +
        `${seconds(timeouts.headersTimeoutMs)}, the whole request within ${seconds(timeouts.requestTimeoutMs)}`,
    };
  }
  // llhttp's reason is a fixed phrase ("Invalid header value char") that never quotes the request.
  const reason = error.code?.startsWith('HPE_') && typeof error.reason === 'string' ? `: ${error.reason}` : '';
  return { code: 'BAD_REQUEST', message: `Malformed HTTP request${reason}` };
}

/** A whole HTTP/1.1 response in the envelope every other error of the service has. */
function envelopeResponse(code: ErrorCode, message: string): string {
  const status = ERROR_STATUS[code];
  // The request's own X-Request-Id is unreadable or may be what was refused: always a fresh one.
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code, message, details: [] }, request_id: requestId });
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}
