// A small HTTP load balancer shaped like kube-proxy, for the fault tests' traffic (load-generator.ts).
//
// The balancer polls each backend's /readyz every `pollMs`, sends each request to the next backend
// (round robin) among the ready ones, and never retries. As with a Kubernetes readiness probe, one
// passing poll makes a backend ready and `failureThreshold` failed polls in a row (the chart's 2 by
// default; a poll that times out fails) take it out: one slow answer on a busy machine does not. A
// backend that fails, refuses or resets a request fails that request (502), as it would fail the
// client's connection behind kube-proxy; with no ready backend the request fails at once (503). Like
// kube-proxy, which forwards TCP, it never closes a client's idle connection: the client closes its
// own, so no request can meet a connection the balancer is closing at that moment (ECONNRESET, a race
// of the test's own making).
//
// It runs in a process of its own (startRoundRobinLb), driven over Node's IPC channel, as kube-proxy
// runs apart from whatever changes the Service's endpoints: a test process that stands still (its
// simulated API, a garbage collection, a blocked write to its output) must not hold up the traffic.
// Answers that take long are kept by backend, and each request the load generator numbers
// (LOAD_SEQUENCE_HEADER) is traced, so that a timeout says whether the request ever reached the
// balancer, when, which replica had it, and what came back.
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { watchEventLoop, type EventLoopReport } from './event-loop-watch.js';

/** The header in which the load generator numbers its requests, for the balancer's traces. */
export const LOAD_SEQUENCE_HEADER = 'x-load-sequence';

export interface Backend {
  /** http://host:port of the API. */
  url: string;
  /** http://host:port of its admin port (/readyz). */
  adminUrl: string;
}

export interface BalancerOptions {
  pollMs?: number;
  pollTimeoutMs?: number;
  failureThreshold?: number;
  slowMs?: number;
}

/** Requests sent to each backend (by API url), the ones that found no ready backend, and upstream failures (the first 20 said). */
export interface BalancerCounts {
  byBackend: Record<string, number>;
  noBackend: number;
  upstreamErrors: number;
  errors: string[];
}

/** Per backend, the upstream answers that took `slowMs` or more (or have not ended yet): how many, the first one's start, the longest. */
export type SlowAnswers = Record<string, { count: number; firstAt: string; maxMs: number }>;

/** What the balancer saw of one numbered request. */
export interface RequestTrace {
  /** When it reached the balancer. */
  arrivedAt: string;
  /** The backend it went to (none: no ready backend). */
  backend: string | null;
  /** How it ended, once it has: the status sent back, or the client gone first. */
  end?: { status: number | null; clientGone: boolean; ms: number };
}

export interface RoundRobinLb {
  url: string;
  add(backend: Backend): Promise<void>;
  remove(backend: Backend): Promise<void>;
  /** The backends whose last /readyz poll passed. */
  ready(): Promise<Backend[]>;
  counts(): Promise<BalancerCounts>;
  slow(): Promise<SlowAnswers>;
  /** What the balancer saw of the numbered requests; a number it never saw is absent. */
  traces(sequences: readonly number[]): Promise<Record<number, RequestTrace>>;
  /** How late the balancer's event loop ran. */
  eventLoop(): Promise<EventLoopReport>;
  close(): Promise<void>;
}

interface LocalBalancer {
  url: string;
  add(backend: Backend): void;
  remove(backend: Backend): void;
  ready(): Backend[];
  counts(): BalancerCounts;
  slow(): SlowAnswers;
  traces(sequences: readonly number[]): Record<number, RequestTrace>;
  eventLoop(): EventLoopReport;
  close(): Promise<void>;
}

interface Member {
  backend: Backend;
  ready: boolean;
  /** Failed polls in a row. */
  failures: number;
  agent: http.Agent;
  polling: boolean;
}

/** Enough for several minutes at a few hundred requests a second. */
const MAX_TRACES = 200_000;

async function serveRoundRobinLb(options: BalancerOptions): Promise<LocalBalancer> {
  const pollMs = options.pollMs ?? 250;
  const slowMs = options.slowMs ?? 5_000;
  const pollTimeoutMs = options.pollTimeoutMs ?? 1_000;
  const failureThreshold = options.failureThreshold ?? 2;
  const eventLoop = watchEventLoop();
  const members = new Map<string, Member>();
  const byBackend: Record<string, number> = {};
  let noBackend = 0;
  let upstreamErrors = 0;
  const errors: string[] = [];
  const slowAnswers: SlowAnswers = {};
  const traces = new Map<number, RequestTrace>();
  const inFlight = new Map<http.ServerResponse, { backend: string; started: number }>();
  const noteSlow = (into: SlowAnswers, backend: string, started: number, ms: number) => {
    if (ms < slowMs) return;
    const entry = (into[backend] ??= { count: 0, firstAt: new Date(started).toISOString(), maxMs: 0 });
    entry.count += 1;
    entry.maxMs = Math.max(entry.maxMs, Math.round(ms));
    if (started < Date.parse(entry.firstAt)) entry.firstAt = new Date(started).toISOString();
  };
  let next = 0;

  const poll = async (member: Member) => {
    if (member.polling) return;
    member.polling = true;
    let passed: boolean;
    try {
      const response = await fetch(`${member.backend.adminUrl}/readyz`, { signal: AbortSignal.timeout(pollTimeoutMs) });
      await response.arrayBuffer();
      passed = response.status === 200;
    } catch {
      passed = false;
    }
    member.polling = false;
    member.failures = passed ? 0 : member.failures + 1;
    if (passed) member.ready = true;
    else if (member.failures >= failureThreshold) member.ready = false;
  };
  const poller = setInterval(() => {
    for (const member of members.values()) void poll(member);
  }, pollMs);

  const pick = (): Member | undefined => {
    const ready = [...members.values()].filter((m) => m.ready);
    if (ready.length === 0) return undefined;
    next = (next + 1) % ready.length;
    return ready[next];
  };

  const trace = (req: http.IncomingMessage, res: http.ServerResponse, backend: string | null, started: number) => {
    const sequence = Number(req.headers[LOAD_SEQUENCE_HEADER]);
    if (!Number.isInteger(sequence) || traces.size >= MAX_TRACES) return;
    const entry: RequestTrace = { arrivedAt: new Date(started).toISOString(), backend };
    traces.set(sequence, entry);
    res.once('close', () => {
      entry.end = { status: res.headersSent ? res.statusCode : null, clientGone: !res.writableFinished, ms: Date.now() - started };
    });
  };

  const server = http.createServer((req, res) => {
    const started = Date.now();
    const member = pick();
    trace(req, res, member?.backend.url ?? null, started);
    if (member === undefined) {
      noBackend += 1;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('no ready backend');
      return;
    }
    const target = new URL(req.url ?? '/', member.backend.url);
    byBackend[member.backend.url] = (byBackend[member.backend.url] ?? 0) + 1;
    inFlight.set(res, { backend: member.backend.url, started });
    // Once the answer has ended, or the client has gone (its timeout): the time the backend took, as far as the client saw it.
    res.once('close', () => {
      inFlight.delete(res);
      noteSlow(slowAnswers, member.backend.url, started, Date.now() - started);
    });
    const fail = (error: Error) => {
      upstreamErrors += 1;
      errors.push(`${new Date().toISOString()} ${member.backend.url}${req.url ?? ''}: ${error.message}${res.headersSent ? ' (mid-answer)' : ''}`);
      // Mid-answer, the client's connection breaks as it would behind kube-proxy.
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream ${member.backend.url}: ${error.message}`);
      else res.destroy(error);
    };
    const upstream = http.request(target, { method: req.method, headers: req.headers, agent: member.agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on('error', fail);
      answer.pipe(res);
    });
    upstream.on('error', fail);
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    add: (backend) => {
      const member: Member = { backend, ready: false, failures: 0, agent: new http.Agent({ keepAlive: true, maxSockets: 64 }), polling: false };
      members.set(backend.url, member);
      void poll(member);
    },
    remove: (backend) => {
      const member = members.get(backend.url);
      members.delete(backend.url);
      member?.agent.destroy();
    },
    ready: () => [...members.values()].filter((m) => m.ready).map((m) => m.backend),
    counts: () => ({ byBackend: { ...byBackend }, noBackend, upstreamErrors, errors: errors.slice(0, 20) }),
    slow: () => {
      const now = Date.now();
      const answers = structuredClone(slowAnswers);
      for (const { backend, started } of inFlight.values()) noteSlow(answers, backend, started, now - started);
      return answers;
    },
    traces: (sequences) => Object.fromEntries(sequences.flatMap((sequence) => {
      const found = traces.get(sequence);
      return found === undefined ? [] : [[sequence, found]];
    })),
    eventLoop: () => eventLoop.report(),
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(poller);
        eventLoop.stop();
        for (const member of members.values()) member.agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Operation = 'add' | 'remove' | 'ready' | 'counts' | 'slow' | 'traces' | 'eventLoop';
interface Command { id: number; operation: Operation; argument?: unknown }
interface Reply { id: number; value?: unknown; error?: string }

/** Starts the balancer in a process of its own (this file run as a script), and drives it over IPC. */
export async function startRoundRobinLb(options: BalancerOptions = {}): Promise<RoundRobinLb> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(options)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`The balancer process exited (code ${code}, signal ${signal})`))));
  exited.catch(() => undefined);
  const url = await Promise.race([new Promise<string>((resolve) => child.once('message', (message) => resolve((message as { url: string }).url))), exited]);
  let nextId = 0;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  child.on('message', (message) => {
    const reply = message as Reply;
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error !== undefined) waiter?.reject(new Error(`The balancer process: ${reply.error}`));
    else waiter?.resolve(reply.value);
  });
  const call = <T>(operation: Operation, argument?: unknown): Promise<T> => {
    const id = nextId++;
    const answered = new Promise<T>((resolve, reject) => pending.set(id, { resolve: resolve as (value: unknown) => void, reject }));
    child.send({ id, operation, argument } satisfies Command);
    return Promise.race([answered, exited]);
  };
  const only = (backend: Backend): Backend => ({ url: backend.url, adminUrl: backend.adminUrl });
  return {
    url,
    add: (backend) => call('add', only(backend)),
    remove: (backend) => call('remove', only(backend)),
    ready: () => call('ready'),
    counts: () => call('counts'),
    slow: () => call('slow'),
    traces: (sequences) => call('traces', sequences),
    eventLoop: () => call('eventLoop'),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await gone;
    },
  };
}

async function runBalancerProcess(options: BalancerOptions): Promise<void> {
  const balancer = await serveRoundRobinLb(options);
  const send = (message: unknown) => process.send?.(message);
  process.on('message', (message) => {
    const { id, operation, argument } = message as Command;
    try {
      const value =
        operation === 'add' ? balancer.add(argument as Backend)
        : operation === 'remove' ? balancer.remove(argument as Backend)
        : operation === 'traces' ? balancer.traces(argument as number[])
        : balancer[operation]();
      send({ id, value } satisfies Reply);
    } catch (error) {
      send({ id, error: (error as Error).message } satisfies Reply);
    }
  });
  // The test process closed the channel, or has gone: so does the balancer.
  process.once('disconnect', () => void balancer.close().then(() => process.exit(0)));
  send({ url: balancer.url });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runBalancerProcess(JSON.parse(process.argv[2] ?? '{}') as BalancerOptions).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
