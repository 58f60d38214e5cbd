// One WATCH request through client-node's Watch, turned into a single outcome the reflector loop can
// branch on: the stream ended, the version expired (410), it failed, it stalled, or it was stopped.
import { Agent } from 'node:http';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import type { Clock } from '../domain/clock.js';
import { guardIdle } from './idle-guard.js';
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
}

export async function watchOnce(kubeConfig: KubeConfig, options: WatchStreamOptions): Promise<WatchOutcome> {
  const local = new AbortController();
  const agents: Agent[] = [];
  let settle: (outcome: WatchOutcome) => void = () => undefined;
  let settled = false;
  let lastActivity = options.clock.now();
  const outcome = new Promise<WatchOutcome>((resolve) => {
    settle = (result) => {
      if (settled) return;
      settled = true;
      local.abort();
      // Watch hands out its AbortController only once headers arrive, so a request hung before
      // them could not be cancelled; destroying the agent we gave it closes that socket too.
      for (const agent of agents) agent.destroy();
      resolve(result);
    };
  });
  const onStop = (): void => settle({ kind: 'aborted' });
  if (options.signal.aborted) return { kind: 'aborted' };
  options.signal.addEventListener('abort', onStop, { once: true });

  const params: Record<string, string | number | boolean> = {
    allowWatchBookmarks: true,
    resourceVersion: options.resourceVersion,
    timeoutSeconds: options.timeoutSeconds,
  };
  if (options.labelSelector !== undefined) params.labelSelector = options.labelSelector;

  const onLine = (type: string, object: unknown): void => {
    if (settled) return;
    lastActivity = options.clock.now();
    if (type === 'ERROR') {
      const status = object as { code?: unknown; message?: unknown };
      const code = typeof status.code === 'number' ? status.code : undefined;
      const error = new KubeRequestError('KUBE_WATCH_ERROR', `Watch of "${options.path}" got an ERROR event: ${String(status.message ?? 'no message')}`, code);
      return settle(code === 410 ? { kind: 'expired', error } : { kind: 'failed', error });
    }
    if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED' || type === 'BOOKMARK') {
      // Watch swallows what its callback throws (it shares a try with JSON.parse): report it here instead.
      try {
        options.onEvent(type, object as ReflectedObject);
      } catch (error) {
        settle({ kind: 'failed', error: error instanceof Error ? error : new Error(String(error)) });
      }
    }
  };
  const onDone = (err: unknown): void => {
    if (err === null || err === undefined) return settle({ kind: 'ended' });
    const error = err instanceof Error ? err : new Error(String(err));
    const code = statusCodeOf(err);
    if (code === 410) return settle({ kind: 'expired', error });
    settle({ kind: 'failed', error: code === undefined ? error : new KubeRequestError('KUBE_HTTP_STATUS', `Watch of "${options.path}" failed: HTTP ${code} (${error.message})`, code) });
  };

  const onAgent = (agent: Agent): void => {
    if (settled) agent.destroy();
    else agents.push(agent);
  };
  void new Watch(capturingAgents(kubeConfig, onAgent)).watch(options.path, params, onLine, onDone).then(
    (controller) => {
      if (settled) return controller.abort();
      local.signal.addEventListener('abort', () => controller.abort(), { once: true });
      options.onOpen?.();
    },
    (error: unknown) => onDone(error ?? new Error('Watch failed to start')),
  );
  // No event and no bookmark for stallTimeoutMs means a silent, half-open stream: restart it.
  void guardIdle({
    limitMs: options.stallTimeoutMs,
    clock: options.clock,
    delay: options.delay,
    signal: local.signal,
    lastActivity: () => lastActivity,
    onIdle: (idle) => settle({ kind: 'stalled', error: new KubeRequestError('KUBE_STALLED', `Watch of "${options.path}" was silent for ${idle} ms (limit ${options.stallTimeoutMs} ms)`) }),
  });

  const result = await outcome;
  options.signal.removeEventListener('abort', onStop);
  return result;
}

/**
 * A view of the kubeconfig whose applyToFetchOptions records the agent it creates (one per call), so
 * this watch's sockets can be destroyed without touching anyone else's.
 */
function capturingAgents(kubeConfig: KubeConfig, onAgent: (agent: Agent) => void): KubeConfig {
  const view = Object.create(kubeConfig) as KubeConfig;
  view.applyToFetchOptions = async (opts) => {
    const init = await kubeConfig.applyToFetchOptions(opts);
    if (init.agent instanceof Agent) onAgent(init.agent);
    return init;
  };
  return view;
}
