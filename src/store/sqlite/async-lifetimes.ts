// The lifetime totals of the telemetry flow on SQLite: saves go where the index's writes go (the write
// worker, or this thread's connection after the work before them, lifetime-store.ts lifetimeSaves),
// reads stay on the main thread's connection. A saved total is
// kept here until the worker has committed it, and read from here meanwhile: an accumulator let go
// right after its flush and wanted again by the next sample must load what it saved, not the row
// before it. A save that fails is logged and kept, and goes again with the next one: the totals are
// lost only if the process stops before any save succeeds again.
//
// Totals replace what is stored, so only a workload's newest totals need to go again. Usage figures
// are added to what is stored, so those of a failed save are added into the workload's next send
// whatever was sent since: none is lost, and none goes twice once committed.
import { addUsage, emptyUsage, type GpuUsage } from '../../domain/gpu-usage.js';
import type { LifetimeRepository, LifetimeSave, LifetimeTotals } from '../../domain/telemetry.js';

export interface AsyncLifetimesParts {
  /** Reads on the main thread's connection. */
  stored: Pick<LifetimeRepository, 'loadLifetime'>;
  writes: { saveLifetimes(entries: readonly LifetimeSave[]): Promise<void> };
  logger: { error(fields: object, message: string): void };
}

/** A workload with something not committed yet. */
interface Pending {
  /** Its newest totals handed over: what reads answer, and what goes again after a failure. */
  totals: LifetimeTotals;
  /** Saves carrying it that have not answered yet. */
  sending: number;
  /** Whether the save carrying `totals` failed. */
  resendTotals: boolean;
  /** Usage of its failed saves, for the next send. */
  resendUsage: GpuUsage | undefined;
}

function sumOf(a: GpuUsage | undefined, b: GpuUsage | undefined): GpuUsage | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  const sum = emptyUsage();
  addUsage(sum, a);
  addUsage(sum, b);
  return sum;
}

export class AsyncLifetimes implements LifetimeRepository {
  readonly #parts: AsyncLifetimesParts;
  readonly #pending = new Map<string, Pending>();

  constructor(parts: AsyncLifetimesParts) {
    this.#parts = parts;
  }

  loadLifetime(workloadId: string): LifetimeTotals | undefined {
    return this.#pending.get(workloadId)?.totals ?? this.#parts.stored.loadLifetime(workloadId);
  }

  saveLifetimes(entries: readonly LifetimeSave[]): void {
    const sending = new Map<string, LifetimeSave>();
    for (const [workloadId, pending] of this.#pending) {
      if (!pending.resendTotals && pending.resendUsage === undefined) continue;
      sending.set(workloadId, withUsage({ workloadId, totals: pending.totals }, pending.resendUsage));
      pending.resendTotals = false;
      pending.resendUsage = undefined;
    }
    for (const entry of entries) {
      const again = sending.get(entry.workloadId);
      sending.set(entry.workloadId, withUsage({ workloadId: entry.workloadId, totals: entry.totals }, sumOf(again?.usage, entry.usage)));
      const pending = this.#pending.get(entry.workloadId);
      if (pending !== undefined) pending.totals = entry.totals;
      else this.#pending.set(entry.workloadId, { totals: entry.totals, sending: 0, resendTotals: false, resendUsage: undefined });
    }
    const batch = [...sending.values()];
    for (const { workloadId } of batch) (this.#pending.get(workloadId) as Pending).sending += 1;
    this.#parts.writes.saveLifetimes(batch).then(
      () => {
        for (const { workloadId } of batch) this.#answered(workloadId);
      },
      (error: unknown) => {
        for (const { workloadId, totals, usage } of batch) {
          const pending = this.#pending.get(workloadId) as Pending;
          // Newer totals handed over since replace these: they go (or went) in their own save.
          if (pending.totals === totals) pending.resendTotals = true;
          pending.resendUsage = sumOf(pending.resendUsage, usage);
          this.#answered(workloadId);
        }
        this.#parts.logger.error(
          { err: error, workloads: batch.length },
          'Saving GPU lifetime totals failed; they go again with the next save',
        );
      },
    );
  }

  /** Totals not committed yet (sent, or waiting to be sent again). */
  get unsaved(): number {
    return this.#pending.size;
  }

  #answered(workloadId: string): void {
    const pending = this.#pending.get(workloadId) as Pending;
    pending.sending -= 1;
    if (pending.sending === 0 && !pending.resendTotals && pending.resendUsage === undefined) this.#pending.delete(workloadId);
  }
}

function withUsage(entry: LifetimeSave, usage: GpuUsage | undefined): LifetimeSave {
  return usage === undefined ? entry : { ...entry, usage };
}
