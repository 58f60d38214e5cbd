// The two ways a scenario is measured: a throughput run (autocannon, a fixed number of keep-alive
// connections, for a fixed time) and a sequential run (one keep-alive connection, one request after
// the other, for clean latency percentiles). Both cycle through a list of GET paths and count every
// response that is not 2xx and every connection error.
import { Agent, request } from 'node:http';
import autocannon from 'autocannon';

export interface LatencySummary {
  /** Responses measured. */
  requests: number;
  /** Milliseconds. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface RunResult extends LatencySummary {
  seconds: number;
  reqPerSec: number;
  /** Responses with a status outside 200–299. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  statusCodes: Record<string, number>;
}

export interface LoadResult extends RunResult {
  connections: number;
}

export interface Target {
  url: string;
  paths: readonly string[];
  headers: Record<string, string>;
}

/** Nearest-rank percentiles of millisecond samples; zeros when there are none. */
export function summarize(samples: number[]): LatencySummary {
  if (samples.length === 0) return { requests: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return {
    requests: sorted.length,
    p50: round(at(0.5)),
    p90: round(at(0.9)),
    p99: round(at(0.99)),
    max: round(sorted[sorted.length - 1] ?? 0),
    mean: round(sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length),
  };
}

/** `fn` timed `runs` times, one call after the other, after `warmup` unmeasured calls. */
export async function timeCalls(fn: () => Promise<unknown>, options: { runs: number; warmup: number }): Promise<LatencySummary> {
  for (let i = 0; i < options.warmup; i += 1) await fn();
  const samples: number[] = [];
  for (let i = 0; i < options.runs; i += 1) {
    const began = performance.now();
    await fn();
    samples.push(performance.now() - began);
  }
  return summarize(samples);
}

/** autocannon with `connections` keep-alive connections for `seconds`; latencies kept at full precision. */
export async function loadRun(target: Target, options: { connections: number; seconds: number }): Promise<LoadResult> {
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: options.connections,
        duration: options.seconds,
        headers: target.headers,
        requests: target.paths.map((path) => ({ method: 'GET', path })),
        timeout: 30,
      },
      (error: unknown, finished: autocannon.Result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(finished)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      samples.push(responseTime);
      statusCodes[String(statusCode)] = (statusCodes[String(statusCode)] ?? 0) + 1;
    });
  });
  const responses = samples.length;
  return {
    ...summarize(samples),
    connections: options.connections,
    seconds: result.duration,
    reqPerSec: Math.round((responses / result.duration) * 10) / 10,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes,
  };
}

/**
 * One request at a time on one keep-alive connection, until `maxRequests` or `maxSeconds` (but at
 * least `minRequests`, so a slow endpoint still gets a few samples).
 */
export async function sequentialRun(target: Target, options: { maxRequests: number; maxSeconds: number; minRequests: number }): Promise<RunResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const base = new URL(target.url);
  const samples: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let non2xx = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < options.maxRequests; i += 1) {
      if (i >= options.minRequests && performance.now() - started > options.maxSeconds * 1000) break;
      const path = target.paths[i % target.paths.length] ?? '/';
      const begin = performance.now();
      try {
        const status = await get(agent, { hostname: base.hostname, port: base.port, path, headers: target.headers });
        samples.push(performance.now() - begin);
        statusCodes[String(status)] = (statusCodes[String(status)] ?? 0) + 1;
        if (status < 200 || status > 299) non2xx += 1;
      } catch {
        errors += 1;
      }
    }
  } finally {
    agent.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  return { ...summarize(samples), seconds: Math.round(seconds * 100) / 100, reqPerSec: Math.round((samples.length / seconds) * 10) / 10, non2xx, errors, statusCodes };
}

/** One GET whose body is read to the end; resolves with the status. */
export function get(agent: Agent, options: { hostname: string; port: string; path: string; headers: Record<string, string> }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ ...options, method: 'GET', agent, timeout: 30_000 }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** GET returning status and parsed JSON body, for gathering cursors and ids before a run. */
export async function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}
