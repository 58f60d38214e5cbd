// A reflector for one (cluster, resource path): LIST (paginated) → SYNC snapshot → WATCH from the
// list's resourceVersion, forever. client-node's ListWatch gives up on most errors and emits `error`
// on stop() (DESIGN "Runtime and toolchain"), so this loop owns resilience: re-watch from the last
// resourceVersion when a stream ends, relist on 410, jittered backoff on every other failure, and a
// watchdog that restarts a stream that went silent.
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../domain/clock.js';
import type { FieldSelection } from '../domain/field-selection.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import type { ObjectDecoder } from './decode/decoder.js';
import { guardIdle } from './idle-guard.js';
import { KubeRequestError, withoutManagedFields, type K8sLogger, type ReflectedObject } from './kube-object.js';
import { listPages } from './list-pages.js';
import { watchOnce, type WatchOutcome } from './watch-stream.js';

const MAX_RETRY_AFTER_MS = 60_000;

export type ReflectorEvent<T> =
  /**
   * The full current state: objects the consumer holds that are missing here were deleted meanwhile.
   * `paged`: the state is the PAGEs delivered since the last first page, and `items` is empty.
   */
  | { type: 'SYNC'; items: T[]; resourceVersion: string; paged?: boolean }
  /** One page of a LIST (pages: true). `first` starts a LIST: pages of an earlier one that failed are void. */
  | { type: 'PAGE'; items: T[]; first: boolean }
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T; resourceVersion: string };

export interface ReflectorOptions<T> {
  /** Collection path, e.g. "/api/v1/pods" or "/apis/batch/v1/namespaces/ml/jobs". */
  path: string;
  labelSelector?: string;
  /** LIST chunk size (default 500). */
  pageSize?: number;
  /**
   * Deliver a LIST page by page (PAGE events, then a `paged` SYNC) rather than as one SYNC holding
   * every object: the consumer keeps what it needs of each page, and the LIST is never in memory whole.
   */
  pages?: boolean;
  /** Where LIST pages and watch streams are parsed (default: on this thread). */
  decoder?: ObjectDecoder;
  /** The fields of each object that are delivered (default: all but managedFields). */
  fields?: FieldSelection;
  clock: Clock;
  /** Resolves after `ms`, or early (resolve or reject) once `signal` aborts. */
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1), for backoff jitter and watch timeouts (default Math.random). */
  random?: () => number;
  /** Server-side watch timeout drawn per watch, so many watches do not all end at once (default 300–600). */
  watchTimeoutSeconds?: { min: number; max: number };
  /** No event or bookmark for this long restarts the watch (default 180000: three bookmark periods). */
  stallTimeoutMs?: number;
  /** No LIST page for this long fails the LIST (default 60000). */
  listTimeoutMs?: number;
  /** Default base 1 s, max 30 s, factor 2, equal jitter (never zero, so no hot loop). */
  backoff?: Partial<Omit<BackoffOptions, 'random'>>;
  logger: K8sLogger;
  /** Fields added to every log line, e.g. { cluster: 'gpu-east', resource: 'pods' }. */
  logContext?: Record<string, unknown>;
  /** Called synchronously in stream order; a throw counts as a failure and the event is redelivered. */
  onEvent: (event: ReflectorEvent<T>) => void;
}

export interface ReflectorStatus {
  synced: boolean;
  lastResourceVersion: string | undefined;
  /** Successful LISTs after the first (after 410 or a failed LIST). */
  relists: number;
  /** Recoveries: every watch that ended, failed, stalled or expired, and every failed LIST (not stop()). */
  restarts: number;
  lastError: { message: string; code?: string; statusCode?: number; at: number } | undefined;
  /** Age of the open watch stream; undefined while none is open. */
  watchAgeMs: number | undefined;
  /** ADDED/MODIFIED/DELETED events delivered. */
  events: number;
  eventsByType: Record<'ADDED' | 'MODIFIED' | 'DELETED', number>;
  /** The last LIST or WATCH attempt failed and no success came since (the source is down or refusing). */
  failing: boolean;
  /**
   * Set once the loop itself ended without stop() (a bug: run() handles every failure it expects).
   * Nothing restarts it; the informer stays stale, so /livez fails on it and the kubelet restarts us.
   */
  loopEnded?: { message: string; at: number };
}

export class Reflector<T extends ReflectedObject> {
  private readonly backoff: Backoff;
  private readonly random: () => number;
  private readonly log: K8sLogger;
  private controller: AbortController | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private isSynced = false;
  private rv: string | undefined;
  private relists = 0;
  private restarts = 0;
  private events = 0;
  private readonly eventsByType = { ADDED: 0, MODIFIED: 0, DELETED: 0 };
  private failing = false;
  private lists = 0;
  private lastError: ReflectorStatus['lastError'];
  private watchStartedAt: number | undefined;
  private watchWasActive = false;
  private watchWasOpened = false;
  private loopEnded: ReflectorStatus['loopEnded'];

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly options: ReflectorOptions<T>,
  ) {
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff({ baseMs: 1000, maxMs: 30_000, factor: 2, jitter: 'equal', ...options.backoff, random: this.random });
    const range = options.watchTimeoutSeconds;
    if (range !== undefined && !(range.min > 0 && range.max >= range.min)) {
      throw new Error(`Cannot create reflector for "${options.path}": ` +
        `watchTimeoutSeconds needs 0 < min <= max, got ${range.min}–${range.max}`);
    }
    this.log = {
      debug: (obj, msg) => options.logger.debug({ ...options.logContext, path: options.path, ...obj }, msg),
      info: (obj, msg) => options.logger.info({ ...options.logContext, path: options.path, ...obj }, msg),
      warn: (obj, msg) => options.logger.warn({ ...options.logContext, path: options.path, ...obj }, msg),
      error: (obj, msg) => options.logger.error({ ...options.logContext, path: options.path, ...obj }, msg),
    };
  }

  /** True once the first LIST was delivered; stays true through later faults. */
  get synced(): boolean {
    return this.isSynced;
  }

  start(): void {
    if (this.running !== undefined) throw new Error(`Cannot start reflector for "${this.options.path}": it was already started`);
    const controller = new AbortController();
    this.controller = controller;
    this.running = this.run(controller.signal).catch((error: unknown) => {
      // run() handles every failure itself; reaching here is a bug, logged rather than left unhandled,
      // and kept for status(): a loop that ended quietly would leave the index stale for good.
      this.loopEnded = { message: error instanceof Error ? error.message : String(error), at: this.options.clock.now() };
      this.log.error({ err: error }, 'Reflector loop crashed');
    });
  }

  /** Ends the loop; resolves once nothing more will be delivered. Emits no error. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.controller?.abort();
    await this.running;
  }

  status(): ReflectorStatus {
    return {
      synced: this.isSynced,
      lastResourceVersion: this.rv,
      relists: this.relists,
      restarts: this.restarts,
      lastError: this.lastError,
      watchAgeMs: this.watchStartedAt === undefined ? undefined : this.options.clock.now() - this.watchStartedAt,
      events: this.events,
      eventsByType: { ...this.eventsByType },
      failing: this.failing,
      ...(this.loopEnded === undefined ? {} : { loopEnded: { ...this.loopEnded } }),
    };
  }

  private async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      if (needList) {
        try {
          await this.list(signal);
          needList = false;
        } catch (error) {
          if (signal.aborted) return;
          this.restarts += 1;
          // A LIST that failed (410 on a continue token included) is retried from scratch after backoff,
          // or after the server's Retry-After when it asked for longer (bounded: a bad header must not
          // silence a cluster for an hour).
          this.fail(error, 'LIST failed');
          const asked = Math.min((error as Partial<KubeRequestError>).retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
          await this.pause(Math.max(this.backoff.next(), asked), signal);
          continue;
        }
      }
      const outcome = await this.watch(signal);
      if (outcome.kind === 'aborted') return;
      this.restarts += 1;
      if (outcome.kind === 'expired') {
        this.log.info({ resourceVersion: this.rv }, 'Watch resourceVersion expired (410): relisting');
        needList = true;
      } else if (outcome.kind === 'ended') {
        this.log.debug({ resourceVersion: this.rv }, 'Watch stream ended: re-watching');
        // A stream that closes cleanly before any event or bookmark (a proxy, a misconfigured server)
        // must not turn into a tight re-watch loop.
        if (!this.watchWasActive) await this.pause(this.backoff.next(), signal);
      } else if (outcome.kind === 'stalled' && this.watchWasOpened) {
        // The server answered, then sent nothing: a quiet collection on a server that sends no
        // bookmarks then (v1.20 sends none to a watch whose resource has not changed since it
        // began), or a half-open connection. Either way a new watch is the cure, and it is no
        // failure unless that watch fails too.
        this.record(outcome.error);
        this.log.info({ resourceVersion: this.rv, err: outcome.error }, 'Watch silent: re-watching');
      } else {
        this.fail(outcome.error, outcome.kind === 'stalled' ? 'Watch stalled before the server answered' : 'Watch failed');
        await this.pause(this.backoff.next(), signal);
      }
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    const listTimeoutMs = this.options.listTimeoutMs ?? 60_000;
    const local = new AbortController();
    const onStop = (): void => local.abort();
    signal.addEventListener('abort', onStop, { once: true });
    let lastPage = this.options.clock.now();
    void guardIdle({
      limitMs: listTimeoutMs,
      clock: this.options.clock,
      delay: this.options.delay,
      signal: local.signal,
      lastActivity: () => lastPage,
      onIdle: (idle) => local.abort(
        new KubeRequestError('KUBE_STALLED', `LIST of "${this.options.path}" got no page for ${idle} ms (limit ${listTimeoutMs} ms)`),
      ),
    });
    const paged = this.options.pages === true;
    const items: T[] = [];
    try {
      const result = await listPages<T>(this.kubeConfig, {
        path: this.options.path,
        labelSelector: this.options.labelSelector,
        pageSize: this.options.pageSize ?? 500,
        decoder: this.options.decoder,
        fields: this.options.fields,
        signal: local.signal,
        onPage: (page, index) => {
          lastPage = this.options.clock.now();
          if (!paged) for (const item of page) items.push(withoutManagedFields(item));
          else if (!signal.aborted) this.emit({ type: 'PAGE', items: page.map(withoutManagedFields), first: index === 0 });
        },
      });
      if (signal.aborted) return;
      this.emit(
        paged
          ? { type: 'SYNC', items: [], resourceVersion: result.resourceVersion, paged }
          : { type: 'SYNC', items, resourceVersion: result.resourceVersion },
      );
      this.rv = result.resourceVersion;
      if (this.lists > 0) this.relists += 1;
      this.lists += 1;
      this.isSynced = true;
      this.failing = false;
      this.backoff.reset();
      this.log.info({ items: result.items, pages: result.pages, resourceVersion: result.resourceVersion }, 'Listed');
    } catch (error) {
      const reason: unknown = local.signal.reason;
      throw !signal.aborted && reason instanceof KubeRequestError ? reason : error;
    } finally {
      local.abort();
      signal.removeEventListener('abort', onStop);
    }
  }

  private async watch(signal: AbortSignal): Promise<WatchOutcome> {
    // Always set by the LIST before the first watch; "0" would mean "any version" to the server.
    const from = this.rv ?? '0';
    const { min, max } = this.options.watchTimeoutSeconds ?? { min: 300, max: 600 };
    this.watchStartedAt = this.options.clock.now();
    this.watchWasActive = false;
    this.watchWasOpened = false;
    try {
      return await watchOnce(this.kubeConfig, {
        path: this.options.path,
        labelSelector: this.options.labelSelector,
        resourceVersion: from,
        timeoutSeconds: min + Math.floor(this.random() * (max - min + 1)),
        stallTimeoutMs: this.options.stallTimeoutMs ?? 180_000,
        clock: this.options.clock,
        delay: this.options.delay,
        decoder: this.options.decoder,
        fields: this.options.fields,
        signal,
        onOpen: () => {
          this.failing = false;
          this.watchWasOpened = true;
        },
        onEvent: (type, object) => {
          // Any event or bookmark proves the connection works again.
          this.backoff.reset();
          this.failing = false;
          this.watchWasActive = true;
          const rv = object.metadata?.resourceVersion;
          if (type !== 'BOOKMARK') {
            const clean = withoutManagedFields(object) as T;
            this.emit({ type, object: clean, resourceVersion: rv ?? this.rv ?? from });
            this.events += 1;
            this.eventsByType[type] += 1;
          }
          // Advanced only after delivery, so an event the consumer threw on is watched again.
          if (rv !== undefined && rv !== '') this.rv = rv;
        },
      });
    } finally {
      this.watchStartedAt = undefined;
    }
  }

  private emit(event: ReflectorEvent<T>): void {
    if (this.stopped) return;
    this.options.onEvent(event);
  }

  private fail(error: unknown, message: string): void {
    this.failing = true;
    const err = this.record(error);
    this.log.warn({ err, statusCode: err.statusCode, backoffAttempt: this.backoff.attempts + 1 }, message);
  }

  /** Keeps the error as lastError (shown on /readyz) without counting it as a failure. */
  private record(error: unknown): Error & Partial<KubeRequestError> {
    const err: Error & Partial<KubeRequestError> = error instanceof Error ? error : new Error(String(error));
    const { code, statusCode } = err;
    this.lastError = {
      message: err.message,
      code: typeof code === 'string' ? code : undefined,
      statusCode: typeof statusCode === 'number' ? statusCode : undefined,
      at: this.options.clock.now(),
    };
    return err;
  }

  private async pause(ms: number, signal: AbortSignal): Promise<void> {
    await this.options.delay(ms, signal).catch(() => undefined);
  }
}
