// Drives a Reflector against the simulated API the way the indexer will: a consumer applies every
// event to a Map and checks it never sees an event twice, so tests can assert "converged to exactly
// the store, nothing lost or doubled" after each fault.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { systemClock } from '../../src/domain/clock.js';
import { Reflector, type ReflectorOptions } from '../../src/k8s/reflector.js';
import type { KubeApi } from '../../sim/kube-api/server.js';
import type { KubeObject, ResourceName } from '../../sim/kube-api/resources.js';
import { ObjectMap, snapshotOf } from '../support/object-map.js';

/** Resolves after `ms`, or as soon as `signal` aborts (resolving, so callers need no catch). */
export const fastDelay = (ms: number, signal: AbortSignal): Promise<void> =>
  sleep(ms, undefined, { signal }).catch(() => undefined);

/** What the consumer holds; compare its snapshot() with storeSnapshot(). */
export type MapConsumer = ObjectMap<KubeObject>;

export function storeSnapshot(sim: KubeApi, resource: ResourceName = 'pods'): Record<string, string | undefined> {
  return snapshotOf(sim.store.list(resource));
}

export function startReflector(sim: KubeApi, options: Partial<ReflectorOptions<KubeObject>> = {}): { reflector: Reflector<KubeObject>; consumer: MapConsumer } {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const consumer = new ObjectMap<KubeObject>();
  const reflector = new Reflector<KubeObject>(kc, {
    path: '/api/v1/pods',
    pageSize: 100,
    clock: systemClock,
    delay: fastDelay,
    watchTimeoutSeconds: { min: 60, max: 60 },
    stallTimeoutMs: 600,
    backoff: { baseMs: 20, maxMs: 200 },
    logger: pino({ level: 'silent' }),
    onEvent: consumer.apply,
    ...options,
  });
  reflector.start();
  return { reflector, consumer };
}

/** Polls `check` until it stops throwing; rethrows its last error after `timeoutMs`. */
export async function eventually(check: () => void, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(20);
    }
  }
}
