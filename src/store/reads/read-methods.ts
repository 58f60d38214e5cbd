// The read port's methods by name, for what carries a call elsewhere and answers it there (the read
// pool's workers): the forwarding side is derived from the port, never written out method by method.
import type { WorkloadIndex } from '../../query/ports.js';

/** Every method of WorkloadIndex; each is a read. */
export const READ_METHODS = [
  'list', 'get', 'podGpuTimes', 'stats', 'queuePercentiles', 'trends', 'rankByGpuHours', 'rankByQueue', 'rankByUsage', 'describe',
  'usage', 'pricedUsage',
  'activeGpus', 'teamCounts', 'cursorKey', 'retentionDays', 'fleetHistory',
] as const satisfies readonly (keyof WorkloadIndex)[];
export type ReadMethod = (typeof READ_METHODS)[number];

// A method added to the port and not listed above fails the type check here.
const everyMethodListed: Exclude<keyof WorkloadIndex, ReadMethod> extends never ? true : never = true;
void everyMethodListed;

/** A WorkloadIndex whose every call is `call(method, args)`. */
export function forwardingIndex(call: (method: ReadMethod, args: unknown[]) => Promise<unknown>): WorkloadIndex {
  const index: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  for (const method of READ_METHODS) index[method] = (...args) => call(method, args);
  // Each entry forwards its arguments as they are and answers what the other side's method returns.
  return index as unknown as WorkloadIndex;
}

/** What the opener of an index knows of it beyond its rows, answered without a read. */
export interface IndexTerms {
  /** The key it read back from the index at open (sql/service-secrets.ts). */
  cursorKey: Uint8Array;
  /** The service's retention_days; null when it was opened without one. */
  retentionDays: number | null;
}

/**
 * `index` with its terms answered from what the opener holds: no read per request (nor a read worker's
 * turn, nor a read replica that may lag behind the primary the key was made on).
 */
export function withIndexTerms(index: WorkloadIndex, terms: IndexTerms): WorkloadIndex {
  const reads = forwardingIndex((method, args) => Reflect.apply(index[method], index, args) as Promise<unknown>);
  return { ...reads, cursorKey: async () => terms.cursorKey, retentionDays: async () => terms.retentionDays };
}

export function isReadMethod(name: unknown): name is ReadMethod {
  return (READ_METHODS as readonly unknown[]).includes(name);
}
