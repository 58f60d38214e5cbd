// The read port's methods by name, for what carries a call elsewhere and answers it there (the read
// pool's workers): the forwarding side is derived from the port, never written out method by method.
import type { WorkloadIndex } from '../../query/ports.js';

/** Every method of WorkloadIndex; each is a read. */
export const READ_METHODS = [
  'list', 'get', 'stats', 'queuePercentiles', 'trends', 'rankByGpuHours', 'rankByQueue', 'rankByUsage', 'describe', 'usage',
  'activeGpus', 'teamCounts',
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

export function isReadMethod(name: unknown): name is ReadMethod {
  return (READ_METHODS as readonly unknown[]).includes(name);
}
