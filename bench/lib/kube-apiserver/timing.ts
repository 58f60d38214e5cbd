// The one way both sides of the kube-apiserver comparison are timed: operations one after the other
// on one keep-alive connection (HTTP for the service, HTTPS for the API server, as each is served),
// client wall time from the first request's start to the last body byte. An operation is one GET or a
// few in a row (every page of a cursor walk, a LIST per namespace); bodies are read to the end and not
// parsed (a page's cursor is cut out of the body's text), so neither side pays a client's JSON parse.
// A caller may time an operation in several rounds and summarize their samples together.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { summarize, type LatencySummary } from '../measure/load.js';

export interface Endpoint {
  url: string;
  headers: Record<string, string>;
  /** The CA of an HTTPS endpoint. */
  ca?: string;
}

export interface Reply {
  status: number;
  body: Buffer;
}

/** One keep-alive connection: every request waits for the one before. */
export class Connection {
  private readonly base: URL;
  private readonly agent: HttpAgent | HttpsAgent;

  constructor(private readonly endpoint: Endpoint) {
    this.base = new URL(endpoint.url);
    this.agent = this.base.protocol === 'https:' ? new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: endpoint.ca }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  }

  get(path: string): Promise<Reply> {
    const send = this.base.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const options = { hostname: this.base.hostname, port: this.base.port, path, method: 'GET', headers: this.endpoint.headers, agent: this.agent, timeout: 120_000 };
      const req = send(options, (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      });
      req.on('timeout', () => req.destroy(new Error(`GET ${path} got no answer in 120 s`)));
      req.on('error', reject);
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface OperationResult {
  requests: number;
  bytes: number;
  /** 0 when every response was 2xx, else the first other status. */
  badStatus: number;
}

export type Operation = (connection: Connection) => Promise<OperationResult>;

/** One GET. */
export function single(path: string): Operation {
  return async (connection) => {
    const reply = await connection.get(path);
    return { requests: 1, bytes: reply.body.length, badStatus: ok(reply.status) ? 0 : reply.status };
  };
}

/** GETs in a row (one LIST per namespace of an initiative), as one operation. */
export function sequence(paths: readonly string[]): Operation {
  return async (connection) => {
    let bytes = 0;
    for (const path of paths) {
      const reply = await connection.get(path);
      bytes += reply.body.length;
      if (!ok(reply.status)) return { requests: paths.length, bytes, badStatus: reply.status };
    }
    return { requests: paths.length, bytes, badStatus: 0 };
  };
}

/**
 * Every page of a cursor walk, as one operation: `first`, then `next(token)` while a page names a
 * token. `tokenOf` cuts the token out of a page without parsing it.
 */
export function walk(paths: readonly string[], next: (path: string, token: string) => string, tokenOf: (body: Buffer) => string | undefined): Operation {
  return async (connection) => {
    let requests = 0;
    let bytes = 0;
    for (const first of paths) {
      let path: string | undefined = first;
      while (path !== undefined) {
        const reply = await connection.get(path);
        requests += 1;
        bytes += reply.body.length;
        if (!ok(reply.status)) return { requests, bytes, badStatus: reply.status };
        const token = tokenOf(reply.body);
        path = token === undefined ? undefined : next(first, token);
      }
    }
    return { requests, bytes, badStatus: 0 };
  };
}

/** The service's cursor: "next_token" in the metadata at the end of the body (absent on the last page). */
export function serviceToken(body: Buffer): string | undefined {
  return /"next_token":"([^"]+)"/.exec(body.subarray(Math.max(0, body.length - 1024)).toString('latin1'))?.[1];
}

/** The API server's continue token: in the list's metadata, at the start of the body. */
export function kubeToken(body: Buffer): string | undefined {
  return /"continue":"([^"]+)"/.exec(body.subarray(0, 2048).toString('latin1'))?.[1];
}

export interface TimedRun extends LatencySummary {
  seconds: number;
  opsPerSecond: number;
  /** HTTP requests per operation (pages of a walk, namespaces of a sequence). */
  requestsPerOp: number;
  /** Response bytes per operation. */
  bytesPerOp: number;
  /** Operations with a non-2xx response, and with a connection error or timeout. */
  non2xx: number;
  errors: number;
}

export interface TimingOptions {
  /** Warm-up: up to this many operations, stopping early once warmupSeconds have passed. */
  warmupOps: number;
  warmupSeconds: number;
  maxOps: number;
  maxSeconds: number;
  minOps: number;
}

/** The raw outcome of one timing round; rounds of the same operation are summarized together. */
export interface Round {
  samples: number[];
  seconds: number;
  requests: number;
  bytes: number;
  non2xx: number;
  errors: number;
}

/**
 * `operation` over and over on one connection: warm-up first (not counted), then up to maxOps or
 * maxSeconds (but at least minOps).
 */
export async function timeRound(endpoint: Endpoint, operation: Operation, options: TimingOptions): Promise<Round> {
  const connection = new Connection(endpoint);
  const round: Round = { samples: [], seconds: 0, requests: 0, bytes: 0, non2xx: 0, errors: 0 };
  try {
    const warming = performance.now();
    for (let i = 0; i < options.warmupOps && performance.now() - warming < options.warmupSeconds * 1000; i += 1) await operation(connection).catch(() => undefined);
    const started = performance.now();
    for (let i = 0; i < options.maxOps; i += 1) {
      if (i >= options.minOps && performance.now() - started > options.maxSeconds * 1000) break;
      const begin = performance.now();
      try {
        const result = await operation(connection);
        round.samples.push(performance.now() - begin);
        round.requests += result.requests;
        round.bytes += result.bytes;
        if (result.badStatus !== 0) round.non2xx += 1;
      } catch {
        round.errors += 1;
      }
    }
    round.seconds = (performance.now() - started) / 1000;
    return round;
  } finally {
    connection.close();
  }
}

/** Percentiles and rates over every sample of the rounds. */
export function summarizeRounds(rounds: readonly Round[]): TimedRun {
  const samples = rounds.flatMap((r) => r.samples);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const n = Math.max(1, samples.length);
  return {
    ...summarize(samples),
    seconds: Math.round(seconds * 100) / 100,
    opsPerSecond: seconds > 0 ? Math.round((samples.length / seconds) * 10) / 10 : 0,
    requestsPerOp: Math.round((rounds.reduce((sum, r) => sum + r.requests, 0) / n) * 10) / 10,
    bytesPerOp: Math.round(rounds.reduce((sum, r) => sum + r.bytes, 0) / n),
    non2xx: rounds.reduce((sum, r) => sum + r.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
  };
}

function ok(status: number): boolean {
  return status >= 200 && status <= 299;
}
