// Scrapes every exporter once per interval, at a fixed rate. Scrapes share one concurrency limit and
// each is bounded by the scrape timeout; an exporter whose previous scrape is still running is skipped
// for this tick (counted as a timeout once it ends), so a hung exporter holds one slot, never the tick
// and never the others. Each payload is ingested as soon as it arrives.
import type { Clock } from '../../domain/clock.js';
import type { ExporterTarget } from './exporter-target.js';
import { ScrapeError, type Scrape, type ScrapeFailureReason } from './http-scrape.js';
import type { OffNodeReading } from './pod-directory.js';

/** A GPU's sample that counts for nobody, and why; `gpu` is its key (UUID, MIG instance). */
export type DroppedSample = OffNodeReading & { gpu: string };

export interface IngestResult {
  samples: number;
  gpus: number;
  /** The payload's GPU samples that count for nobody (docs/telemetry.md, "Trust"). */
  dropped: readonly DroppedSample[];
}

export interface ExporterStatus extends ExporterTarget {
  consecutiveFailures: number;
  failures: number;
  /** GPU samples of this exporter that counted for nobody, since it was found. */
  droppedSamples: number;
  lastError: { reason: ScrapeFailureReason; message: string; at: string } | null;
  lastSuccessAt: string | null;
  lastDurationMs: number | null;
  lastSamples: number;
  lastGpus: number;
}

/** The loop's heartbeat, for liveness: ticks it started, and whether it stopped on purpose or crashed. */
export interface SamplerLoopStatus {
  ticks: number;
  stopped: boolean;
  /** Why the loop ended without stop(), if it did: no scrape happens any more. */
  ended: string | null;
}

/** The latest tick whose scrapes all settled. */
export interface TickReport {
  at: string;
  durationMs: number;
  exporters: number;
  failed: number;
}

export interface SamplerObserver {
  scraped(target: ExporterTarget, result: IngestResult & { seconds: number }): void;
  failed(target: ExporterTarget, failure: { reason: ScrapeFailureReason; seconds: number }): void;
}

export interface SamplerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export interface SamplerOptions {
  intervalMs: number;
  concurrency: number;
  clock: Clock;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  scrape: Scrape;
  targets: () => Iterable<ExporterTarget>;
  /** Parses and stores one payload; throws (ExpositionParseError) when it cannot be read. */
  ingest(target: ExporterTarget, text: string, at: number): IngestResult;
  observer: SamplerObserver;
  logger: SamplerLogger;
  /** As a tick starts, with its exporters, before any scrape (the rings' reservation). */
  beforeTick?: (targets: readonly ExporterTarget[]) => void;
  /** After every tick's scrapes have settled (pruning, lifetime bookkeeping). */
  afterTick?: (at: number) => void;
}

interface Queued {
  target: ExporterTarget;
  done: () => void;
}

function reasonOf(error: unknown): { reason: ScrapeFailureReason; message: string } {
  if (error instanceof ScrapeError) return { reason: error.reason, message: error.message };
  if ((error as { code?: unknown }).code === 'EXPOSITION_INVALID') return { reason: 'parse', message: (error as Error).message };
  return { reason: 'connection', message: (error as Error).message };
}

export class Sampler {
  readonly #options: SamplerOptions;
  readonly #statuses = new Map<string, ExporterStatus>();
  readonly #inFlight = new Set<string>();
  readonly #queue: Queued[] = [];
  readonly #running = new Set<Promise<void>>();
  #loop: Promise<void> | null = null;
  readonly #stopping = new AbortController();
  #lastTickFailedAll = false;
  #lastTick: TickReport | null = null;
  #loopTicks = 0;
  #loopEnded: string | null = null;

  constructor(options: SamplerOptions) {
    this.#options = options;
  }

  start(): void {
    // #run catches what a tick throws; what reaches here is a bug in the loop itself. Kept for
    // loopStatus() so that liveness fails, rather than telemetry going stale without a word.
    this.#loop ??= this.#run().catch((error: unknown) => {
      this.#loopEnded = error instanceof Error ? error.message : String(error);
      this.#options.logger.warn({ err: error }, 'sampler loop crashed: no more scrapes until the process restarts');
    });
  }

  /** Stops ticking; resolves once the scrapes in flight have settled (each is bounded by its timeout). */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.#queue.splice(0).forEach((queued) => queued.done());
    await this.#loop;
    await Promise.allSettled([...this.#running]);
  }

  /** One round over the current exporters; resolves when the scrapes it started have settled. */
  async tick(): Promise<void> {
    const at = this.#options.clock.now();
    const targets = [...this.#options.targets()];
    const live = new Set(targets.map((t) => t.key));
    for (const key of this.#statuses.keys()) if (!live.has(key)) this.#statuses.delete(key);
    this.#options.beforeTick?.(targets);
    const started: Promise<void>[] = [];
    for (const target of targets) {
      if (this.#inFlight.has(target.key)) continue;
      this.#inFlight.add(target.key);
      started.push(new Promise<void>((done) => this.#queue.push({ target, done })));
    }
    const began = performance.now();
    this.#pump();
    await Promise.all(started);
    const failed = targets.filter((t) => (this.#statuses.get(t.key)?.consecutiveFailures ?? 0) > 0).length;
    this.#lastTickFailedAll = targets.length > 0 && failed === targets.length;
    this.#lastTick = {
      at: new Date(at).toISOString(),
      durationMs: Math.round(performance.now() - began),
      exporters: targets.length,
      failed,
    };
    this.#options.afterTick?.(at);
  }

  loopStatus(): SamplerLoopStatus {
    return { ticks: this.#loopTicks, stopped: this.#stopping.signal.aborted, ended: this.#loopEnded };
  }

  lastTick(): TickReport | null {
    return this.#lastTick;
  }

  statuses(): ExporterStatus[] {
    return [...this.#statuses.values()];
  }

  /** Exporters exist and not one answered in the last tick: telemetry is going stale. */
  failingEverywhere(): boolean {
    return this.#lastTickFailedAll;
  }

  async #run(): Promise<void> {
    const { clock, delay, intervalMs, logger } = this.#options;
    while (!this.#stopping.signal.aborted) {
      const started = clock.now();
      this.#loopTicks += 1;
      // Not awaited: a tick whose scrapes run long must not push the next one back.
      this.tick().catch((error: unknown) => logger.warn({ err: error }, 'sampler tick failed'));
      await delay(Math.max(0, intervalMs - (clock.now() - started)), this.#stopping.signal);
    }
  }

  #pump(): void {
    while (this.#running.size < this.#options.concurrency && this.#queue.length > 0) {
      const queued = this.#queue.shift() as Queued;
      const scrape: Promise<void> = this.#scrape(queued.target).finally(() => {
        this.#running.delete(scrape);
        this.#inFlight.delete(queued.target.key);
        queued.done();
        this.#pump();
      });
      this.#running.add(scrape);
    }
  }

  async #scrape(target: ExporterTarget): Promise<void> {
    const { clock, scrape, ingest, observer, logger } = this.#options;
    const at = clock.now();
    const began = performance.now();
    const status = this.#statusOf(target);
    try {
      const text = await scrape(target.url);
      const result = ingest(target, text, at);
      const seconds = (performance.now() - began) / 1000;
      if (status.consecutiveFailures > 0) {
        logger.info({ exporter: target.key, url: target.url, failures: status.consecutiveFailures }, 'exporter recovered');
      }
      this.#countDropped(target, status, result.dropped);
      Object.assign(status, {
        consecutiveFailures: 0,
        lastSuccessAt: new Date(at).toISOString(),
        lastDurationMs: Math.round(seconds * 1000),
        lastSamples: result.samples,
        lastGpus: result.gpus,
      });
      observer.scraped(target, { ...result, seconds });
    } catch (error) {
      const seconds = (performance.now() - began) / 1000;
      const { reason, message } = reasonOf(error);
      status.consecutiveFailures += 1;
      status.failures += 1;
      status.lastDurationMs = Math.round(seconds * 1000);
      status.lastError = { reason, message, at: new Date(at).toISOString() };
      // One warning when an exporter starts failing, not one per tick.
      const log = status.consecutiveFailures === 1 ? logger.warn.bind(logger) : logger.debug.bind(logger);
      log(
        { exporter: target.key, url: target.url, reason, error: message, consecutiveFailures: status.consecutiveFailures },
        'scrape failed',
      );
      observer.failed(target, { reason, seconds });
    }
  }

  /** Counts an exporter's dropped samples; its first one is logged, once while the exporter lives, not per scrape. */
  #countDropped(target: ExporterTarget, status: ExporterStatus, dropped: readonly DroppedSample[]): void {
    const first = dropped[0];
    if (first === undefined) return;
    if (status.droppedSamples === 0) {
      this.#options.logger.warn(
        {
          exporter: target.key,
          namespace: target.namespace,
          pod: target.pod,
          node: target.node,
          reason: first.reason,
          gpu: first.gpu,
          samplePod: `${first.pod.namespace}/${first.pod.name}`,
          samplePodNode: first.podNode ?? null,
          ...(first.claim === undefined ? {} : { claim: `${first.claim.namespace}/${first.claim.name}` }),
          droppedInScrape: dropped.length,
        },
        'exporter reports a GPU of a pod that does not run on its node: its samples count for nobody ' +
          '(logged once per exporter)',
      );
    }
    status.droppedSamples += dropped.length;
  }

  #statusOf(target: ExporterTarget): ExporterStatus {
    let status = this.#statuses.get(target.key);
    if (status === undefined) {
      status = {
        ...target,
        consecutiveFailures: 0, failures: 0, droppedSamples: 0,
        lastError: null, lastSuccessAt: null, lastDurationMs: null, lastSamples: 0, lastGpus: 0,
      };
      this.#statuses.set(target.key, status);
    }
    return status;
  }
}
