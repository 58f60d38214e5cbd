// What a run of `gpucap migrate` decides (src/cli/migrate/run-plan.ts) from the source's state, the
// chains the target records and the flags: one table row per case, no database.
import { expect } from 'chai';
import type { Chain, Phase, PhaseProgress } from '../../../src/cli/migrate/checkpoints.js';
import { planRun, type RunFlags, type RunPlan } from '../../../src/cli/migrate/run-plan.js';
import type { SourceState } from '../../../src/cli/migrate/source.js';

const T = Date.parse('2026-11-10T00:00:00Z');

function state(overrides: Partial<SourceState> = {}): SourceState {
  const s = { schemaVersion: 4, maxUpdatedAt: T, workloads: 1000, lifetimeSamples: 0, clusters: ['local'], ...overrides };
  return { ...s, id: `v${s.schemaVersion}:${s.maxUpdatedAt}:${s.workloads}:${s.lifetimeSamples}`, ...overrides };
}

const ALL_DONE: [Phase, PhaseProgress][] = (['partitions', 'workloads', 'pods', 'prune', 'lifetime', 'usage', 'rollups', 'verify'] as const).map((p) => [p, { lastKey: null, rows: 10 }]);

function chain(of: SourceState, progress: 'done' | 'in workloads', updatedAt = T): Chain {
  const phases = new Map<Phase, PhaseProgress>(
    progress === 'done' ? ALL_DONE : [['partitions', { lastKey: null, rows: 2 }], ['workloads', { lastKey: ['acme', T, 'w-40'], rows: 40 }]],
  );
  return {
    sourceId: of.id,
    plan: { mode: 'full', since: null, clusters: of.clusters, path: '/data/index.db', schemaVersion: of.schemaVersion, maxUpdatedAt: of.maxUpdatedAt, workloads: of.workloads, startedAt: T },
    phases,
    updatedAt,
    done: progress === 'done',
  };
}

const NONE: RunFlags = { resume: false, restart: false };
const RESUME: RunFlags = { resume: true, restart: false };
const RESTART: RunFlags = { resume: false, restart: true };

const source = state();
const later = state({ maxUpdatedAt: T + 60_000, workloads: 1010 });
const earlier = state({ maxUpdatedAt: T - 60_000, workloads: 990 });
const otherCluster = state({ clusters: ['gpu-east'], maxUpdatedAt: T + 5 });

const kind = (plan: RunPlan) => (plan.kind === 'start' ? `start${plan.clear ? ', clear' : ''}${plan.drop.length > 0 ? `, drop ${plan.drop.join(' ')}` : ''}` : `${plan.kind} ${'chain' in plan ? plan.chain.sourceId : plan.base.sourceId}`);

describe('gpucap migrate: what a run does', () => {
  const cases: [string, SourceState, Chain[], RunFlags, string][] = [
    ['a first run copies everything', source, [], NONE, 'start'],
    ['--resume without an earlier run copies everything', source, [], RESUME, 'start'],
    ['chains of other clusters are not this source\'s', source, [chain(otherCluster, 'in workloads')], NONE, 'start'],
    ['--restart forgets this source\'s chains and clears its clusters', source, [chain(source, 'in workloads'), chain(earlier, 'done', T - 1), chain(otherCluster, 'done')], RESTART, `start, clear, drop ${source.id} ${earlier.id}`],
    ['a finished run of this very state only checks', source, [chain(source, 'done')], NONE, `finished ${source.id}`],
    ['--resume after a finished run of this very state only checks', source, [chain(source, 'done')], RESUME, `finished ${source.id}`],
    ['--resume continues a stopped run of this state', source, [chain(source, 'in workloads')], RESUME, `continue ${source.id}`],
    ['--resume after a finished run of an earlier state copies the delta', later, [chain(source, 'done')], RESUME, `delta ${source.id}`],
    ['the newest chain is the one that counts', later, [chain(source, 'done', T + 1), chain(earlier, 'done', T)], RESUME, `delta ${source.id}`],
  ];
  for (const [name, s, chains, flags, expected] of cases) {
    it(name, () => {
      expect(kind(planRun(s, chains, flags))).to.equal(expected);
    });
  }

  const refusals: [string, SourceState, Chain[], RunFlags, RegExp][] = [
    ['a stopped run of this state without --resume', source, [chain(source, 'in workloads')], NONE,
      /^A migration from this source stopped in phase "workloads" after 40 rows; pass --resume to continue it, or --restart to start over$/],
    ['a stopped run of another state, even with --resume', later, [chain(source, 'in workloads')], RESUME,
      /^The source changed since the migration that stopped in phase "workloads" after 40 rows \(1000 workloads, changed until 2026-11-10T00:00:00.000Z; now: 1010 workloads, changed until 2026-11-10T00:01:00.000Z\), so it cannot be resumed; pass --restart to start over$/],
    ['a finished run of another state without --resume', later, [chain(source, 'done')], NONE,
      /^The target holds a finished migration of an earlier state of this source \(1000 workloads, .*\); pass --resume to copy what changed since, or --restart to copy everything again$/],
    ['a source older than the finished copy', earlier, [chain(source, 'done')], RESUME,
      /^The source is not a later state of the one migrated \(1000 workloads, changed until 2026-11-10T00:00:00.000Z; now: schema v4, changed until 2026-11-09T23:59:00.000Z\); pass --restart to copy everything again$/],
    ['a source of another schema than the finished copy', state({ schemaVersion: 5, maxUpdatedAt: T + 1 }), [chain(source, 'done')], RESUME, /^The source is not a later state of the one migrated/],
  ];
  for (const [name, s, chains, flags, message] of refusals) {
    it(`refuses ${name}`, () => {
      expect(() => planRun(s, chains, flags)).to.throw(message).with.property('code', 'TRANSFER_REFUSED');
    });
  }
});
