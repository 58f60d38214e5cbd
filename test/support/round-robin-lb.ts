// Traffic for the fault tests: a load generator, and a small HTTP load balancer shaped like kube-proxy.
//
// The balancer polls each backend's /readyz every `pollMs`, sends each request to the next backend
// (round robin) among the ready ones, and never retries. As with a Kubernetes readiness probe, one
// passing poll makes a backend ready and `failureThreshold` failed polls in a row (the chart's 2 by
// default; a poll that times out fails) take it out: one slow answer on a busy machine does not. A backend that fails, refuses
// or resets a request fails that request (502), as it would fail the client's connection behind
// kube-proxy; with no ready backend the request fails at once (503). Like kube-proxy, which forwards
// TCP, it never closes a client's idle connection: the client closes its own, so no request can meet a
// connection the balancer is closing at that moment (ECONNRESET, a race of the test's own making).
// Answers that take long are kept by backend, so that a timeout says which replica was slow and when.
//
// The load generator sends requests at a constant rate whatever the answers take (an open loop), each
// with a client timeout, and counts what came back. It runs in the test's process (startLoad) or, so
// that it never starves behind the balancer and the simulated API on a small machine, in a process of
// its own (startLoadProcess: this file run as a script, driven over stdin and stdout).
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { apiGet, type ApiAnswer, type ApiCaller } from './replica-process.js';

export interface Backend {
  /** http://host:port of the API. */
  url: string;
  /** http://host:port of its admin port (/readyz). */
  adminUrl: string;
}

export interface RoundRobinLb {
  url: string;
  add(backend: Backend): void;
  remove(backend: Backend): void;
  /** The backends whose last /readyz poll passed. */
  ready(): Backend[];
  /** Requests sent to each backend (by API url), the ones that found no ready backend, and upstream failures (the first 20 said). */
  counts(): { byBackend: Record<string, number>; noBackend: number; upstreamErrors: number; errors: string[] };
  /** Per backend, the upstream answers that took `slowMs` or more (or have not ended yet): how many, the first one's start, the longest. */
  slow(): SlowAnswers;
  close(): Promise<void>;
}

type SlowAnswers = Record<string, { count: number; firstAt: string; maxMs: number }>;

interface Member {
  backend: Backend;
  ready: boolean;
  /** Failed polls in a row. */
  failures: number;
  agent: http.Agent;
  polling: boolean;
}

export async function startRoundRobinLb(options: { pollMs?: number; pollTimeoutMs?: number; failureThreshold?: number; slowMs?: number } = {}): Promise<RoundRobinLb> {
  const pollMs = options.pollMs ?? 250;
  const slowMs = options.slowMs ?? 5_000;
  const pollTimeoutMs = options.pollTimeoutMs ?? 1_000;
  const failureThreshold = options.failureThreshold ?? 2;
  const members = new Map<string, Member>();
  const byBackend: Record<string, number> = {};
  let noBackend = 0;
  let upstreamErrors = 0;
  const errors: string[] = [];
  const slowAnswers: SlowAnswers = {};
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

  const server = http.createServer((req, res) => {
    const member = pick();
    if (member === undefined) {
      noBackend += 1;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('no ready backend');
      return;
    }
    const target = new URL(req.url ?? '/', member.backend.url);
    byBackend[member.backend.url] = (byBackend[member.backend.url] ?? 0) + 1;
    const started = Date.now();
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
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(poller);
        for (const member of members.values()) member.agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface LoadPlan {
  /** Requests per second. */
  rate: number;
  /** The requests, sent in turn, over and over. */
  targets: readonly { baseUrl: string; path: string }[];
  caller: ApiCaller;
  /** A request without an answer by then fails. */
  timeoutMs: number;
  /** What counts as a success: any 2xx, or a 200 or a 503 with Retry-After (a database outage). */
  accept: '2xx' | '200-or-503-retry-after';
}

export interface LoadReport {
  sent: number;
  /** Answers by status ("0" for no answer), and 503s with a Retry-After. */
  byStatus: Record<string, number>;
  retryAfter503: number;
  failed: number;
  /** Failures by status and error (the balancer's 502 body names the upstream error). */
  failureKinds: Record<string, number>;
  /** The first failures, with what they were. */
  failures: { at: number; path: string; status: number; error?: string; ms: number; body: string }[];
  latencyMs: { p50: number; p99: number; max: number };
  /** Requests per second actually sent. */
  rate: number;
  /** CPU the generator used, in % of one core. */
  cpuPercent: number;
}

export interface Load {
  /** Failures so far (from a load process: as of its last progress line, twice a second). */
  failed(): number;
  /** Stops sending, waits for the last answers, and reports. */
  stop(): Promise<LoadReport>;
}

function accepts(plan: LoadPlan, answer: ApiAnswer): boolean {
  if (plan.accept === '2xx') return answer.status >= 200 && answer.status < 300;
  return answer.status === 200 || (answer.status === 503 && answer.retryAfter !== null);
}

/** Sends the plan's requests from this process. */
export function startLoad(plan: LoadPlan): Load {
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const inFlight = new Set<Promise<void>>();
  const latencies: number[] = [];
  const report: LoadReport = { sent: 0, byStatus: {}, retryAfter503: 0, failed: 0, failureKinds: {}, failures: [], latencyMs: { p50: 0, p99: 0, max: 0 }, rate: 0, cpuPercent: 0 };
  const send = () => {
    const target = plan.targets[report.sent++ % plan.targets.length];
    if (target === undefined) return;
    const request = apiGet(target.baseUrl, target.path, plan.caller, plan.timeoutMs).then((answer) => {
      latencies.push(answer.ms);
      report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
      if (answer.status === 503 && answer.retryAfter !== null) report.retryAfter503 += 1;
      if (accepts(plan, answer)) return;
      report.failed += 1;
      const kind = `${answer.status} ${answer.error ?? answer.body.slice(0, 80).replace(/127\.0\.0\.1:\d+/g, 'HOST')}`;
      report.failureKinds[kind] = (report.failureKinds[kind] ?? 0) + 1;
      if (report.failures.length < 20) {
        report.failures.push({ at: Date.now(), path: target.path, status: answer.status, error: answer.error, ms: Math.round(answer.ms), body: answer.body.slice(0, 200) });
      }
    });
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  };
  // Catches up after a late timer: the rate holds on average, as a constant arrival rate would.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - started) / 1000) * plan.rate);
    while (report.sent < due) send();
  }, 5);
  return {
    failed: () => report.failed,
    stop: async () => {
      clearInterval(timer);
      const seconds = (performance.now() - started) / 1000;
      await Promise.all([...inFlight]);
      latencies.sort((x, y) => x - y);
      const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
      report.latencyMs = { p50: at(0.5), p99: at(0.99), max: Math.round(latencies[latencies.length - 1] ?? 0) };
      report.rate = report.sent / seconds;
      const cpu = process.cpuUsage(cpuBefore);
      report.cpuPercent = Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100);
      return report;
    },
  };
}

/**
 * Sends the plan's requests from a process of its own: this file run as a script, the plan as its
 * argument. It prints `failed N` twice a second, and `report {…}` once its stdin closes.
 */
export async function startLoadProcess(plan: LoadPlan): Promise<Load> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), JSON.stringify(plan)], { stdio: ['pipe', 'pipe', 'inherit'] });
  let failed = 0;
  let resolveReport: (report: LoadReport) => void = () => undefined;
  const reported = new Promise<LoadReport>((resolve) => (resolveReport = resolve));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let started: () => void = () => undefined;
  const running = new Promise<void>((resolve) => (started = resolve));
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'started') started();
    else if (line.startsWith('failed ')) failed = Number(line.slice('failed '.length));
    else if (line.startsWith('report ')) resolveReport(JSON.parse(line.slice('report '.length)) as LoadReport);
  });
  await Promise.race([running, exited.then((code) => Promise.reject(new Error(`The load process exited before it started (code ${code})`)))]);
  return {
    failed: () => failed,
    stop: async () => {
      child.stdin.end();
      const report = await Promise.race([reported, exited.then((code) => Promise.reject(new Error(`The load process exited without a report (code ${code})`)))]);
      await exited;
      return report;
    },
  };
}

async function runLoadProcess(plan: LoadPlan): Promise<void> {
  const load = startLoad(plan);
  // The test that started it has gone (a failure, mocha's --exit): nobody reads the report.
  process.stdout.on('error', () => process.exit(1));
  console.log('started');
  const progress = setInterval(() => console.log(`failed ${load.failed()}`), 500);
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  clearInterval(progress);
  console.log(`report ${JSON.stringify(await load.stop())}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runLoadProcess(JSON.parse(process.argv[2] ?? '{}') as LoadPlan).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
