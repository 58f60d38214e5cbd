// Namespaces and Nodes gone from the cluster (a DELETED event, or left out of a relist) whose labels
// a workload may still map with. The workloads in or on them go after them, often well after: pod
// garbage collection deletes the pods of a deleted node, and a finished Job stays, with its deleted
// pods, for as long as its owner keeps it, re-mapped at every relist. Each of those mappings must give
// the attribution the workload ran with, so a deleted object is kept while a cached workload uses it.
//
// Only the indexer knows which workloads it caches; what it does is map them, through lookups here.
// So a check asks it: the names under check are returned as "changed", the indexer maps again, at
// once, every cached workload in or on them, and a name that none of those mappings (nor any other)
// looked up before the next event is forgotten. A check runs when the deleted objects are more than
// twice as many as the last check found in use, or at a relist: the workloads that keep a deleted
// object are re-mapped rarely, and the deleted objects stay under twice those in use.
import type { WithMetadata } from './seen.js';

interface Entry {
  object: WithMetadata;
  /** Under check, or checked already: a name no mapping used since then can go. */
  checked: boolean;
  used: boolean;
}

export class DeletedObjects {
  readonly #entries = new Map<string, Entry>();
  #inUseAtLastCheck = 0;

  get size(): number {
    return this.#entries.size;
  }

  add(name: string, object: WithMetadata): void {
    this.#entries.set(name, { object, checked: false, used: false });
  }

  /** Removes and returns the deleted object of that name (an object of that name is back). */
  take(name: string): WithMetadata | undefined {
    const entry = this.#entries.get(name);
    this.#entries.delete(name);
    return entry?.object;
  }

  /** The deleted object of that name, for a mapping: the mapping uses it, so it is kept. */
  use(name: string): WithMetadata | undefined {
    const entry = this.#entries.get(name);
    if (entry === undefined) return undefined;
    entry.used = true;
    return entry.object;
  }

  /** Forgets the names the last check found no workload using. */
  forgetUnused(): void {
    let inUse = 0;
    for (const [name, entry] of this.#entries) {
      if (!entry.checked) continue;
      if (entry.used) inUse += 1;
      else this.#entries.delete(name);
    }
    this.#inUseAtLastCheck = inUse;
  }

  /** Starts a check when one is due, or always with `relist`: returns the names whose workloads must be mapped again now. */
  startCheck(options: { relist: boolean }): string[] {
    const due = this.#entries.size > 2 * this.#inUseAtLastCheck;
    if (this.#entries.size === 0 || (!due && !options.relist)) return [];
    for (const entry of this.#entries.values()) {
      entry.checked = true;
      entry.used = false;
    }
    return [...this.#entries.keys()];
  }
}
