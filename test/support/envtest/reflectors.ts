// Starts the service's Reflector against envtest as a given kubeconfig's user (the reader, in the
// e2e), feeding an ObjectMap, and stops every one a test started.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { systemClock } from '../../../src/domain/clock.js';
import { Reflector, type ReflectorOptions } from '../../../src/k8s/reflector.js';
import type { KubeObject } from './admin-client.js';
import { ObjectMap } from '../object-map.js';

/** The four collections the service watches cluster-wide. */
export const WATCHED_PATHS = ['/api/v1/pods', '/api/v1/nodes', '/api/v1/namespaces', '/apis/batch/v1/jobs'] as const;

export interface RunningReflector {
  path: string;
  reflector: Reflector<KubeObject>;
  objects: ObjectMap<KubeObject>;
}

const delay = (ms: number, signal: AbortSignal): Promise<void> => sleep(ms, undefined, { signal }).catch(() => undefined);

export class ReflectorSet {
  readonly running: RunningReflector[] = [];

  /** Starts one reflector on `path` as the user of `kubeconfigPath`, with a short backoff for tests. */
  start(kubeconfigPath: string, path: string, options: Partial<ReflectorOptions<KubeObject>> = {}): RunningReflector {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const objects = new ObjectMap<KubeObject>();
    const reflector = new Reflector<KubeObject>(kubeConfig, {
      path,
      clock: systemClock,
      delay,
      // Well under the tests' deadlines; the stall watchdog must not fire during a test.
      backoff: { baseMs: 100, maxMs: 1000 },
      stallTimeoutMs: 120_000,
      logger: pino({ level: 'silent' }),
      onEvent: objects.apply,
      ...options,
    });
    reflector.start();
    const started = { path, reflector, objects };
    this.running.push(started);
    return started;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.running.splice(0).map(({ reflector }) => reflector.stop()));
  }
}
