// Measures how long a watch event takes to become visible in GET /v1/workloads/{id}: the caller adds
// a sample when it makes the change in the simulated API, and this polls the service until the row
// shows one of the expected statuses. One request at a time on one keep-alive connection, each
// sample polled 20 ms after its change and then every max(20 ms, 10 % of its age), so the probe adds
// little load however far the service falls behind; the lag's resolution is that poll interval.
import { Agent, request } from 'node:http';

export interface LagSample {
  id: string;
  kind: string;
  /** Statuses that show the change (or a later one of the same object). */
  visibleAs: readonly string[];
  /** performance.now() right after the change was made. */
  emittedAt: number;
}

export interface LagOutcome {
  /** Milliseconds from the change to the first response showing it, one per resolved sample. */
  lags: { kind: string; ms: number }[];
  /** Samples still not visible when the probe gave up. */
  unresolved: number;
  requests: number;
  /** Wall time of each probe GET (ms): when it is high, the service's event loop was busy and the lag includes that wait. */
  requestMs: number[];
  /** Answers other than 200 and 404 (404: not indexed yet), and connection errors. */
  errors: number;
  statusCodes: Record<string, number>;
}

interface Pending extends LagSample {
  nextPollAt: number;
}

const MIN_INTERVAL_MS = 20;
const RELATIVE_INTERVAL = 0.1;

export class LagProbe {
  private outstanding: Pending[] = [];
  private readonly lags: { kind: string; ms: number }[] = [];
  private readonly statusCodes: Record<string, number> = {};
  private requests = 0;
  private readonly requestMs: number[] = [];
  private errors = 0;
  private stopAt: number | undefined;
  private running: Promise<void> | undefined;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });

  constructor(private readonly target: { url: string; headers: Record<string, string> }) {}

  add(sample: LagSample): void {
    this.outstanding.push({ ...sample, nextPollAt: sample.emittedAt + MIN_INTERVAL_MS });
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** Keeps polling until every sample resolved or `timeoutMs` passed, then reports. */
  async finish(timeoutMs: number): Promise<LagOutcome> {
    this.stopAt = performance.now() + timeoutMs;
    await this.running;
    this.agent.destroy();
    return { lags: this.lags, unresolved: this.outstanding.length, requests: this.requests, requestMs: this.requestMs, errors: this.errors, statusCodes: this.statusCodes };
  }

  private async loop(): Promise<void> {
    for (;;) {
      const now = performance.now();
      if (this.stopAt !== undefined && (this.outstanding.length === 0 || now > this.stopAt)) return;
      const due = this.outstanding.filter((s) => s.nextPollAt <= now);
      if (due.length === 0) {
        const next = Math.min(...this.outstanding.map((s) => s.nextPollAt), now + 50);
        await new Promise((resolve) => setTimeout(resolve, Math.max(2, next - now)));
        continue;
      }
      const resolved = new Set<Pending>();
      for (const sample of due) {
        const sentAt = performance.now();
        const answer = await this.get(`/v1/workloads/${sample.id}`);
        const seenAt = performance.now();
        this.requestMs.push(seenAt - sentAt);
        this.requests += 1;
        this.statusCodes[String(answer.status)] = (this.statusCodes[String(answer.status)] ?? 0) + 1;
        if (answer.status === 200 && answer.workloadStatus !== undefined && sample.visibleAs.includes(answer.workloadStatus)) {
          this.lags.push({ kind: sample.kind, ms: seenAt - sample.emittedAt });
          resolved.add(sample);
          continue;
        }
        if (answer.status !== 200 && answer.status !== 404) this.errors += 1;
        sample.nextPollAt = seenAt + Math.max(MIN_INTERVAL_MS, (seenAt - sample.emittedAt) * RELATIVE_INTERVAL);
      }
      this.outstanding = this.outstanding.filter((s) => !resolved.has(s));
    }
  }

  private get(path: string): Promise<{ status: number; workloadStatus?: string }> {
    const base = new URL(this.target.url);
    return new Promise((resolve) => {
      const req = request({ hostname: base.hostname, port: base.port, path, headers: this.target.headers, agent: this.agent, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          let workloadStatus: string | undefined;
          if (res.statusCode === 200) {
            try {
              workloadStatus = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { status?: string } }).data?.status;
            } catch {
              workloadStatus = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, workloadStatus });
        });
        res.on('error', () => resolve({ status: 0 }));
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve({ status: 0 }));
      req.end();
    });
  }
}
