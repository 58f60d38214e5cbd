// One WATCH request, turned into a single outcome the reflector loop can branch on: the stream ended,
// the version expired (410), it failed, it stalled, or it was stopped. The request goes through the
// kubeconfig's connection settings (kube-get.ts); the stream is split into lines and each line parsed
// as one event, as client-node's Watch does, without its node-fetch and readline layers, by the
// decoder (decode/): on the main thread or on a worker of its own. A line that is not JSON is
// skipped, as Watch skips it.
import type { KubeConfig } from '@kubernetes/client-node';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../domain/clock.js';
import type { FieldSelection } from '../domain/field-selection.js';
import type { DecodedEvent, ObjectDecoder } from './decode/decoder.js';
import { INLINE_DECODER } from './decode/inline-decoder.js';
import { guardIdle } from './idle-guard.js';
import { kubeConnection, kubeGet, type KubeConnection } from './kube-get.js';
import { KubeRequestError, statusCodeOf, type ReflectedObject } from './kube-object.js';

export type WatchOutcome =
  | { kind: 'ended' }
  | { kind: 'expired'; error: Error }
  | { kind: 'failed'; error: Error }
  | { kind: 'stalled'; error: Error }
  | { kind: 'aborted' };

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchStreamOptions {
  path: string;
  labelSelector?: string;
  resourceVersion: string;
  timeoutSeconds: number;
  stallTimeoutMs: number;
  clock: Clock;
  delay: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Aborts the watch (stop()); the outcome is then "aborted". */
  signal: AbortSignal;
  onEvent: (type: WatchEventType, object: ReflectedObject) => void;
  /** The server accepted the watch (200 and headers): the connection works, even if no event comes for a while. */
  onOpen?: () => void;
  /** Where the stream is decoded (default: on this thread). */
  decoder?: ObjectDecoder;
  /** The fields of each object that are kept (default: all). */
  fields?: FieldSelection;
}

/** TCP keep-alive probes after this long idle, so that a dead peer ends the stream (as client-node's Watch sets). */
const KEEP_ALIVE_MS = 30_000;

function watchUrl(server: string, options: WatchStreamOptions): URL {
  const url = new URL(server + options.path);
  url.searchParams.set('watch', 'true');
  url.searchParams.set('allowWatchBookmarks', 'true');
  url.searchParams.set('resourceVersion', options.resourceVersion);
  url.searchParams.set('timeoutSeconds', String(options.timeoutSeconds));
  if (options.labelSelector !== undefined) url.searchParams.set('labelSelector', options.labelSelector);
  return url;
}

export async function watchOnce(kubeConfig: KubeConfig, options: WatchStreamOptions): Promise<WatchOutcome> {
  if (options.signal.aborted) return { kind: 'aborted' };
  const what = `Watch of "${options.path}"`;
  const local = new AbortController();
  let connection: KubeConnection | undefined;
  let settle: (outcome: WatchOutcome) => void = () => undefined;
  let settled = false;
  let lastActivity = options.clock.now();
  const outcome = new Promise<WatchOutcome>((resolve) => {
    settle = (result) => {
      if (settled) return;
      settled = true;
      local.abort();
      // Its own agent: closing it ends this watch's socket, also one hung before any response.
      connection?.close();
      resolve(result);
    };
  });
  const onStop = (): void => settle({ kind: 'aborted' });
  options.signal.addEventListener('abort', onStop, { once: true });

  const onEvent = ({ type, object }: DecodedEvent): void => {
    if (settled) return;
    lastActivity = options.clock.now();
    if (type === 'ERROR') return settle(errorEventOutcome(what, object));
    if (!isWatchEventType(type)) return;
    try {
      options.onEvent(type, object as ReflectedObject);
    } catch (error) {
      settle({ kind: 'failed', error: error instanceof Error ? error : new Error(String(error)) });
    }
  };
  const onFailure = (err: unknown): void => settle(failureOutcome(err));

  void (async () => {
    try {
      connection = await kubeConnection(kubeConfig, what);
      if (settled) return connection.close();
      const res = await kubeGet(connection, watchUrl(connection.server, options), { what, signal: local.signal });
      if (settled) return res.destroy();
      (res.socket as Socket | null)?.setKeepAlive(true, KEEP_ALIVE_MS);
      options.onOpen?.();
      decodeWatch(res, options, { onEvent, onEnded: () => settle({ kind: 'ended' }), onFailure, signal: local.signal });
    } catch (error) {
      onFailure(error);
    }
  })();
  // No event and no bookmark for stallTimeoutMs means a silent, half-open stream: restart it.
  void guardIdle({
    limitMs: options.stallTimeoutMs,
    clock: options.clock,
    delay: options.delay,
    signal: local.signal,
    lastActivity: () => lastActivity,
    onIdle: (idle) => settle({
      kind: 'stalled',
      error: new KubeRequestError('KUBE_STALLED', `${what} was silent for ${idle} ms (limit ${options.stallTimeoutMs} ms)`),
    }),
  });

  const result = await outcome;
  options.signal.removeEventListener('abort', onStop);
  return result;
}

const WATCH_EVENT_TYPES: ReadonlySet<string> = new Set<WatchEventType>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

function isWatchEventType(type: string): type is WatchEventType {
  return WATCH_EVENT_TYPES.has(type);
}

/** What an ERROR event (a Status object) ends the watch with: 410 means the version expired. */
function errorEventOutcome(what: string, object: unknown): WatchOutcome {
  const status = (object ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof status.code === 'number' ? status.code : undefined;
  const error = new KubeRequestError('KUBE_WATCH_ERROR', `${what} got an ERROR event: ${String(status.message ?? 'no message')}`, code);
  return code === 410 ? { kind: 'expired', error } : { kind: 'failed', error };
}

function failureOutcome(err: unknown): WatchOutcome {
  const error = err instanceof Error ? err : new Error(String(err));
  return statusCodeOf(err) === 410 ? { kind: 'expired', error } : { kind: 'failed', error };
}

/** Feeds the response to the decoder, reading no faster than it decodes, and hands on each event it delivers. */
function decodeWatch(
  res: IncomingMessage,
  options: WatchStreamOptions,
  handlers: { onEvent: (event: DecodedEvent) => void; onEnded: () => void; onFailure: (error: unknown) => void; signal: AbortSignal },
): void {
  const stream = (options.decoder ?? INLINE_DECODER).events(options.fields, {
    onEvents: (events) => {
      for (const event of events) handlers.onEvent(event);
    },
    onEnded: handlers.onEnded,
    onError: handlers.onFailure,
    onDrain: () => res.resume(),
  });
  handlers.signal.addEventListener('abort', () => stream.close(), { once: true });
  res.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) res.pause();
  });
  // The stream ends once the decoder has delivered every line it had (at once, when decoded inline).
  res.on('end', () => stream.end());
  res.on('error', handlers.onFailure);
  res.on('close', () => stream.end());
}
