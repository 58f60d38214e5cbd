// Drives a Reflector against the simulated API the way the indexer will: a consumer applies every
// event to a Map and checks it never sees an event twice, so tests can assert "converged to exactly
// the store, nothing lost or doubled" after each fault.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { systemClock } from '../../src/domain/clock.js';
import { Reflector, type ReflectorEvent, type ReflectorOptions } from '../../src/k8s/reflector.js';
import type { KubeApi } from '../../sim/kube-api/server.js';
import type { KubeObject, ResourceName } from '../../sim/kube-api/resources.js';

/** Resolves after `ms`, or as soon as `signal` aborts (resolving, so callers need no catch). */
export const fastDelay = (ms: number, signal: AbortSignal): Promise<void> =>
  sleep(ms, undefined, { signal }).catch(() => undefined);

export class MapConsumer {
  readonly objects = new Map<string, KubeObject>();
  readonly events: ReflectorEvent<KubeObject>[] = [];
  /** Watch events whose resourceVersion was not above the last one applied (a replay or a double). */
  readonly doubles: string[] = [];
  private lastRv = 0;

  apply = (event: ReflectorEvent<KubeObject>): void => {
    this.events.push(event);
    if (event.type === 'SYNC') {
      this.objects.clear();
      for (const item of event.items) this.objects.set(key(item), item);
      this.lastRv = Number(event.resourceVersion);
      return;
    }
    const rv = Number(event.resourceVersion);
    if (rv <= this.lastRv) this.doubles.push(`${event.type} ${key(event.object)} at ${rv} after ${this.lastRv}`);
    this.lastRv = rv;
    if (event.type === 'DELETED') this.objects.delete(key(event.object));
    else this.objects.set(key(event.object), event.object);
  };

  count(type: ReflectorEvent<KubeObject>['type']): number {
    return this.events.filter((e) => e.type === type).length;
  }

  /** key → resourceVersion, comparable with storeSnapshot(). */
  snapshot(): Record<string, string | undefined> {
    return Object.fromEntries([...this.objects].map(([k, o]) => [k, o.metadata.resourceVersion]).sort());
  }
}

export function storeSnapshot(sim: KubeApi, resource: ResourceName = 'pods'): Record<string, string | undefined> {
  return Object.fromEntries(sim.store.list(resource).map((o) => [key(o), o.metadata.resourceVersion]).sort());
}

function key(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

export function startReflector(sim: KubeApi, options: Partial<ReflectorOptions<KubeObject>> = {}): { reflector: Reflector<KubeObject>; consumer: MapConsumer } {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  const consumer = new MapConsumer();
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
