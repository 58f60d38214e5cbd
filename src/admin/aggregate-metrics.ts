// Prometheus gauges of what the API answers, so that budgets can be alerted on and shown on a wall
// (docs/telemetry.md "Aggregates"): each budget's allocated, used and remaining GPU-hours, and per team
// its running GPUs and its workloads by status. Read from the index when Prometheus scrapes; the
// series are as many as organizations × (pools + teams), never per workload.
//
// One read serves every gauge of a scrape, and scrapes within FRESH_MS of it (two Prometheus replicas,
// a human with curl) share it rather than reading again. Until the index is ready, and when a read
// fails, the gauges are left out and gpucap_aggregates_up says 0: absent figures rather than
// half-synced ones that would page someone.
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../domain/clock.js';
import { capacity } from '../query/capacity.js';
import { chargeback } from '../query/chargeback.js';
import type { CapacityFigures } from '../capacity/budget-figures.js';
import type { BudgetSource, PriceSource, TeamCounts, WorkloadIndex } from '../query/ports.js';
import type { Labels, Sample } from './collected-metrics.js';

const FRESH_MS = 10_000;

export interface AggregateSources {
  index: WorkloadIndex;
  budgets: BudgetSource;
  /** Absent: no organization has prices, and no cost gauge is given. */
  prices?: PriceSource;
  ready: () => boolean;
  clock: Clock;
  logger: { warn(object: object, message: string): void };
}

interface Snapshot {
  at: number;
  budgets: { labels: Labels; figures: CapacityFigures }[];
  teams: TeamCounts;
  /** Each priced organization's teams this UTC month, as its chargeback bills them. */
  teamCosts: { labels: Labels; cost: number; idleCost: number }[];
}

export function registerAggregateMetrics(registry: Registry, sources: AggregateSources): void {
  let last: Snapshot | null = null;
  let pending: Promise<Snapshot | null> | null = null;

  const snapshot = (): Promise<Snapshot | null> => {
    const now = sources.clock.now();
    if (!sources.ready()) return Promise.resolve(null);
    if (last !== null && now - last.at < FRESH_MS) return Promise.resolve(last);
    pending ??= read(sources, now)
      .then((read) => (last = read))
      .catch((error: unknown) => {
        sources.logger.warn({ err: error }, 'could not read the aggregates for /metrics; they are left out of this scrape');
        last = null;
        return null;
      })
      .finally(() => (pending = null));
    return pending;
  };

  const gauge = (name: string, help: string, labelNames: string[], samples: (s: Snapshot) => Sample[]) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        const s = await snapshot();
        if (s !== null) for (const { labels, value } of samples(s)) this.set(labels, value);
      },
    });

  const BUDGET_LABELS = ['organization_id', 'level', 'budget_id'];
  gauge(
    'gpucap_budget_allocated_gpu_hours',
    'GPU-hours allocated to a budget for its current period; level: organization, pool or initiative',
    BUDGET_LABELS,
    (s) => s.budgets.map(({ labels, figures }) => ({ labels, value: figures.allocated })),
  );
  gauge(
    'gpucap_budget_used_gpu_hours',
    'GPU-hours used by a budget in its current period, running workloads up to now (as /v1/capacity)',
    BUDGET_LABELS,
    (s) => s.budgets.map(({ labels, figures }) => ({ labels, value: figures.used })),
  );
  gauge(
    'gpucap_budget_remaining_gpu_hours',
    'Allocated minus used GPU-hours of a budget in its current period; negative once overspent',
    BUDGET_LABELS,
    (s) => s.budgets.map(({ labels, figures }) => ({ labels, value: figures.remaining })),
  );
  gauge('gpucap_team_active_gpus', 'GPUs held by the running workloads of a team', ['organization_id', 'initiative_id'],
    (s) => s.teams.activeGpus.map((t) => ({
      labels: { organization_id: t.organizationId, initiative_id: t.initiativeId },
      value: t.gpus,
    })));
  gauge('gpucap_team_workloads', 'Workloads of a team in the index, by status', ['organization_id', 'initiative_id', 'status'],
    (s) => s.teams.workloads.map((t) => ({
      labels: { organization_id: t.organizationId, initiative_id: t.initiativeId, status: t.status },
      value: t.count,
    })));
  registerTeamCostGauges(gauge);
  new Gauge({
    name: 'gpucap_aggregates_up',
    help: '1 when this scrape holds the gpucap_budget_* and gpucap_team_* gauges; 0 while the index is not ready or its read failed',
    registers: [registry],
    async collect() {
      this.set((await snapshot()) === null ? 0 : 1);
    },
  });
}

type SnapshotGauge = (name: string, help: string, labelNames: string[], samples: (s: Snapshot) => Sample[]) => unknown;

/** Per team, this month's cost and its idle part (issue 40): empty where no organization has prices. */
function registerTeamCostGauges(gauge: SnapshotGauge): void {
  const TEAM_COST_LABELS = ['organization_id', 'initiative_id', 'currency'];
  gauge(
    'gpucap_team_cost',
    'What a team\'s GPU time cost this UTC month so far, at the rates in force while it ran (GET /v1/chargeback for the month); ' +
      'organizations with prices only',
    TEAM_COST_LABELS,
    (s) => s.teamCosts.map(({ labels, cost }) => ({ labels, value: cost })),
  );
  gauge(
    'gpucap_team_idle_cost',
    'The part of gpucap_team_cost whose GPU time sat idle (the idle rule, docs/telemetry.md)',
    TEAM_COST_LABELS,
    (s) => s.teamCosts.map(({ labels, idleCost }) => ({ labels, value: idleCost })),
  );
}

async function read(sources: AggregateSources, now: number): Promise<Snapshot> {
  const [teams, ...capacities] = await Promise.all([
    sources.index.teamCounts(),
    // The budgets' gauges are GPU-hours: their costs would cost reads that no gauge shows.
    ...sources.budgets.budgets().map((budget) =>
      capacity({ ...sources, prices: undefined }, { organizationId: budget.organizationId, initiatives: null }, {}, now)),
  ]);
  const teamCosts = await monthTeamCosts(sources, teams, now);
  const budgets = capacities.flatMap((c) => [
    { labels: { organization_id: c.organizationId, level: 'organization', budget_id: c.organizationId }, figures: c.summary },
    ...c.pools.map((p) => ({ labels: { organization_id: c.organizationId, level: 'pool', budget_id: p.poolId }, figures: p })),
    ...c.initiatives.map((i) => ({
      labels: { organization_id: c.organizationId, level: 'initiative', budget_id: i.initiativeId },
      figures: i,
    })),
  ]);
  return { at: now, budgets, teams, teamCosts };
}

/** The chargeback of this month for every organization with teams and prices. */
async function monthTeamCosts(sources: AggregateSources, teams: TeamCounts, now: number): Promise<Snapshot['teamCosts']> {
  const { prices } = sources;
  if (prices === undefined) return [];
  const organizations = new Set([...teams.workloads, ...teams.activeGpus].map((team) => team.organizationId));
  const priced = [...organizations].filter((organizationId) => prices.pricesFor(organizationId) !== undefined).sort();
  const month = new Date(now).toISOString().slice(0, 7);
  const statements = await Promise.all(priced.map((organizationId) =>
    chargeback({ ...sources, prices }, { organizationId, initiatives: null }, { month, shareIdle: false }, now)));
  return statements.flatMap((statement) =>
    statement.currency === null
      ? []
      : statement.rows.map((row) => ({
        labels: { organization_id: statement.organizationId, initiative_id: row.initiativeId, currency: statement.currency?.code ?? '' },
        cost: row.cost,
        idleCost: row.idleCost,
      })));
}
