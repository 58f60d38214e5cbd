// What a run of `gpucap migrate` does, from the source's state, the chains the target records and the
// flags: start a full copy, continue a stopped one, copy what changed since a finished one (the delta of
// a cut-over), or only check a finished one. A pure function, so that every case is a table row in
// the tests; anything it refuses comes back as TransferRefused with the flag that lets the operator on.
import { PHASES, type Chain, type ChainPlan } from './checkpoints.js';
import { TransferRefused } from './errors.js';
import type { SourceState } from './source.js';

export type RunPlan =
  /** A full copy; `drop` lists the chains to forget and `clear` asks to delete the clusters' rows first (--restart). */
  | { kind: 'start'; drop: string[]; clear: boolean }
  | { kind: 'continue'; chain: Chain }
  /** The rows changed since `base` was copied, over its copy. */
  | { kind: 'delta'; base: Chain }
  /** A chain of this very source is done: nothing to copy, only the check. */
  | { kind: 'finished'; chain: Chain };

export interface RunFlags {
  resume: boolean;
  restart: boolean;
}

/** The chains that copied rows of the source's clusters: this source's earlier runs. */
export function chainsOf(state: SourceState, chains: readonly Chain[]): Chain[] {
  const mine = new Set(state.clusters);
  return chains.filter((chain) =>
    state.clusters.length === 0 ? chain.plan.clusters.length === 0 : chain.plan.clusters.some((c) => mine.has(c)));
}

export function planRun(state: SourceState, chains: readonly Chain[], flags: RunFlags): RunPlan {
  const own = chainsOf(state, chains);
  if (flags.restart) return { kind: 'start', drop: own.map((c) => c.sourceId), clear: true };
  const latest = own[0];
  if (latest === undefined) return { kind: 'start', drop: [], clear: false };
  if (latest.sourceId === state.id) {
    if (latest.done) return { kind: 'finished', chain: latest };
    if (flags.resume) return { kind: 'continue', chain: latest };
    throw new TransferRefused(
      `A migration from this source stopped ${where(latest)}; pass --resume to continue it, or --restart to start over`,
    );
  }
  if (!latest.done) {
    throw new TransferRefused(
      `The source changed since the migration that stopped ${where(latest)} ` +
        `(${describe(latest.plan)}; now: ${state.workloads} workloads, ` +
        `changed until ${iso(state.maxUpdatedAt)}), so it cannot be resumed; pass --restart to start over`,
    );
  }
  if (!flags.resume) {
    throw new TransferRefused(
      'The target holds a finished migration of an earlier state of this source ' +
        `(${describe(latest.plan)}; now: ${state.workloads} workloads, ` +
        `changed until ${iso(state.maxUpdatedAt)}); pass --resume to copy what changed since, or --restart to copy everything again`,
    );
  }
  if (state.schemaVersion !== latest.plan.schemaVersion || state.maxUpdatedAt < latest.plan.maxUpdatedAt) {
    throw new TransferRefused(
      `The source is not a later state of the one migrated (${describe(latest.plan)}; now: schema v${state.schemaVersion}, ` +
        `changed until ${iso(state.maxUpdatedAt)}); pass --restart to copy everything again`,
    );
  }
  return { kind: 'delta', base: latest };
}

function where(chain: Chain): string {
  const phase = PHASES.find((p) => chain.phases.get(p)?.lastKey !== null) ?? 'verify';
  return `in phase "${phase}" after ${chain.phases.get(phase)?.rows ?? 0} rows`;
}

const iso = (ms: number) => new Date(ms).toISOString();
const describe = (plan: ChainPlan) => `${plan.workloads} workloads, changed until ${iso(plan.maxUpdatedAt)}`;
