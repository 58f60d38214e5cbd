// The lifetime totals of the telemetry flow when the index is written on the write worker: saves go
// to the worker with the other writes, reads stay on the main thread's connection. A saved total is
// kept here until the worker has committed it, and read from here meanwhile: an accumulator let go
// right after its flush and wanted again by the next sample must load what it saved, not the row
// before it. A save that fails is logged and kept, and goes again with the next one: the totals are
// lost only if the process stops before any save succeeds again.
import type { LifetimeRepository, LifetimeTotals } from '../../domain/telemetry.js';

interface Entry {
  workloadId: string;
  totals: LifetimeTotals;
}

export interface LifetimesOnWriteThreadParts {
  /** Reads on the main thread's connection. */
  stored: Pick<LifetimeRepository, 'loadLifetime'>;
  writes: { saveLifetimes(entries: readonly Entry[]): Promise<void> };
  logger: { error(fields: object, message: string): void };
}

export class LifetimesOnWriteThread implements LifetimeRepository {
  readonly #parts: LifetimesOnWriteThreadParts;
  /** Totals sent and not committed yet, or whose save failed, by workload. */
  readonly #unsaved = new Map<string, LifetimeTotals>();
  /** Of those, the ones to send again with the next save. */
  readonly #failed = new Set<string>();

  constructor(parts: LifetimesOnWriteThreadParts) {
    this.#parts = parts;
  }

  loadLifetime(workloadId: string): LifetimeTotals | undefined {
    return this.#unsaved.get(workloadId) ?? this.#parts.stored.loadLifetime(workloadId);
  }

  saveLifetimes(entries: readonly Entry[]): void {
    const sending = new Map<string, LifetimeTotals>();
    for (const workloadId of this.#failed) sending.set(workloadId, this.#unsaved.get(workloadId) as LifetimeTotals);
    this.#failed.clear();
    for (const { workloadId, totals } of entries) sending.set(workloadId, totals);
    for (const [workloadId, totals] of sending) this.#unsaved.set(workloadId, totals);
    const batch = [...sending].map(([workloadId, totals]) => ({ workloadId, totals }));
    this.#parts.writes.saveLifetimes(batch).then(
      () => {
        // A later save of the same workload keeps its own entry until it is committed in turn.
        for (const { workloadId, totals } of batch) if (this.#unsaved.get(workloadId) === totals) this.#unsaved.delete(workloadId);
      },
      (error: unknown) => {
        for (const { workloadId, totals } of batch) if (this.#unsaved.get(workloadId) === totals) this.#failed.add(workloadId);
        this.#parts.logger.error({ err: error, workloads: batch.length }, 'Saving GPU lifetime totals failed; they go again with the next save');
      },
    );
  }

  /** Totals not committed yet (sent, or waiting to be sent again). */
  get unsaved(): number {
    return this.#unsaved.size;
  }
}
