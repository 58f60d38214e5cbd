// Raw HTTP helpers for the simulated API tests: a GET with the bearer token, and a watch reader that
// collects newline-delimited events so tests can wait for "the event I expect" with a deadline.
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import type { KubeObject } from '../../sim/kube-api/resources.js';

export interface WireEvent {
  type: string;
  object: KubeObject & { code?: number; reason?: string };
}

export const TOKEN = 'sim-token';

export async function getJson(url: string, token = TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export interface WatchStream {
  status: number;
  events: WireEvent[];
  /** Resolves when the server ends or drops the stream. */
  ended: Promise<void>;
  /** Waits until `predicate` holds for the collected events; rejects after `timeoutMs`. */
  until(predicate: (events: WireEvent[]) => boolean, timeoutMs?: number): Promise<WireEvent[]>;
  close(): void;
}

export function openWatch(url: string, token = TOKEN): Promise<WatchStream> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      const events: WireEvent[] = [];
      const waiters = new Set<() => void>();
      let done = false;
      const ended = new Promise<void>((end) => {
        const finish = (): void => {
          done = true;
          for (const w of waiters) w();
          end();
        };
        res.on('close', finish);
        res.on('error', finish);
      });
      // readline re-emits the response's errors (ECONNRESET on a dropped stream); `ended` covers them.
      const lines = createInterface(res);
      lines.on('error', () => undefined);
      lines.on('line', (line) => {
        events.push(JSON.parse(line) as WireEvent);
        for (const w of waiters) w();
      });
      const until = (predicate: (events: WireEvent[]) => boolean, timeoutMs = 3000): Promise<WireEvent[]> =>
        new Promise((ok, fail) => {
          const check = (): void => {
            if (predicate(events)) return finish(() => ok(events));
            if (done) finish(() => fail(new Error(`Watch ended before the condition held; got ${JSON.stringify(events.map((e) => e.type))}`)));
          };
          const timer = setTimeout(() => finish(() => fail(new Error(`Timed out; got ${JSON.stringify(events.map((e) => e.type))}`))), timeoutMs);
          const finish = (settle: () => void): void => {
            clearTimeout(timer);
            waiters.delete(check);
            settle();
          };
          waiters.add(check);
          check();
        });
      resolve({ status: res.statusCode ?? 0, events, ended, until, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

export function pod(namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { namespace, name, labels }, spec: { containers: [{ name: 'main', image: 'busybox' }] }, status: { phase: 'Pending' } };
}
