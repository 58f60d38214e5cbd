// Traffic for the fault tests: a load generator that sends requests at a constant rate whatever the
// answers take (an open loop), each with a client timeout, and counts what came back. It runs in the
// test's process (startLoad) or, so that it never starves behind the test's own work on a small
// machine, in a process of its own (startLoadProcess: this file run as a script, driven over stdin and
// stdout). Each request carries its number in LOAD_SEQUENCE_HEADER, so that the balancer can say
// where a failed one went (round-robin-lb.ts).
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { watchEventLoop, type EventLoopReport } from './event-loop-watch.js';
import { apiGet, type ApiAnswer, type ApiCaller } from './replica-process.js';
import { LOAD_SEQUENCE_HEADER } from './round-robin-lb.js';

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

export interface LoadFailure {
  /** The request's number (LOAD_SEQUENCE_HEADER). */
  sequence: number;
  /** When it was sent and how long it took, in ms since the epoch and ms. */
  sentAt: number;
  ms: number;
  path: string;
  status: number;
  error?: string;
  body: string;
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
  failures: LoadFailure[];
  latencyMs: { p50: number; p99: number; max: number };
  /** Requests per second actually sent. */
  rate: number;
  /** CPU the generator used, in % of one core. */
  cpuPercent: number;
  /** How late the generator's own event loop ran: a stall delays sending, then sends a burst. */
  eventLoop: EventLoopReport;
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
  const eventLoop = watchEventLoop();
  const inFlight = new Set<Promise<void>>();
  const latencies: number[] = [];
  const report: LoadReport = {
    sent: 0, byStatus: {}, retryAfter503: 0, failed: 0, failureKinds: {}, failures: [], latencyMs: { p50: 0, p99: 0, max: 0 }, rate: 0, cpuPercent: 0, eventLoop: eventLoop.report(),
  };
  const send = () => {
    const sequence = report.sent++;
    const target = plan.targets[sequence % plan.targets.length];
    if (target === undefined) return;
    const sentAt = Date.now();
    const request = apiGet(target.baseUrl, target.path, plan.caller, plan.timeoutMs, { [LOAD_SEQUENCE_HEADER]: String(sequence) }).then((answer) => {
      latencies.push(answer.ms);
      report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
      if (answer.status === 503 && answer.retryAfter !== null) report.retryAfter503 += 1;
      if (accepts(plan, answer)) return;
      report.failed += 1;
      const kind = `${answer.status} ${answer.error ?? answer.body.slice(0, 80).replace(/127\.0\.0\.1:\d+/g, 'HOST')}`;
      report.failureKinds[kind] = (report.failureKinds[kind] ?? 0) + 1;
      if (report.failures.length < 20) {
        report.failures.push({ sequence, sentAt, ms: Math.round(answer.ms), path: target.path, status: answer.status, error: answer.error, body: answer.body.slice(0, 200) });
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
      report.eventLoop = eventLoop.stop();
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
