// The aggregate gauges on the admin port's /metrics through the real service: each budget's figures
// equal /v1/capacity's, each team's running GPUs and workloads by status equal what the index holds,
// one read serves the scrapes of FRESH_MS, and a failing read leaves the gauges out with
// gpucap_aggregates_up 0 while /metrics still answers.
import { expect } from 'chai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import sinon from 'sinon';
import { noBudgets } from '../../src/query/empty-sources.js';
import { ACME_BUDGET } from '../support/acme-budget.js';
import { startTestService, type JsonBody, type TestService } from '../support/service-harness.js';
import { aPodInterval, aWorkload } from '../support/workload-builder.js';

const BUDGET = ACME_BUDGET;

const at = (iso: string) => Date.parse(iso);
const id = (n: number) => `a9000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('admin /metrics aggregate gauges', () => {
  let t: TestService;
  const running = (n: number, org: string, team: string, gpus: number) =>
    aWorkload({ workloadId: id(n), organizationId: org, initiativeId: team, instanceType: 'p5.48xlarge', gpuCount: gpus, status: 'running',
      submittedAt: at('2026-11-20T08:00:00Z'), startedAt: at('2026-11-20T09:00:00Z'), completedAt: null, exitCode: null });
  const finished = (n: number, team: string, status: 'completed' | 'failed') =>
    aWorkload({ workloadId: id(n), initiativeId: team, instanceType: 'p5.48xlarge', gpuCount: 1, status,
      submittedAt: at('2026-11-10T08:00:00Z'), startedAt: at('2026-11-10T09:00:00Z'), completedAt: at('2026-11-10T19:00:00Z'), exitCode: status === 'failed' ? 1 : 0,
      ...(status === 'failed' ? { failureReason: 'nonzero_exit' as const } : {}) });
  const workloads = [
    running(1, 'acme', 'llm', 8), running(2, 'acme', 'llm', 4), running(3, 'acme', 'vision', 2), running(4, 'globex', 'search', 1),
    finished(5, 'llm', 'completed'), finished(6, 'llm', 'completed'), finished(7, 'llm', 'failed'), finished(8, 'vision', 'completed'),
  ];

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    sinon.stub(noBudgets, 'budgets').returns([BUDGET]);
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.map((w) => aPodInterval(w)));
  });
  after(async () => {
    sinon.restore();
    await t.stop();
  });
  afterEach(() => t.clock.advance(60_000));

  type Samples = (readonly [Record<string, string>, number])[];
  /** One scrape: each family's samples as [labels, value], without the registry's default `service` label. */
  const scrape = async () => {
    const res = await fetch(`${t.adminUrl}/metrics`);
    expect(res.status).to.equal(200);
    const families = parsePrometheusTextFormat(await res.text());
    return (name: string): Samples => (families.find((f) => f.name === name)?.metrics ?? []).map((m) => {
      const { service: _service, ...labels } = m.labels ?? {};
      return [labels, Number(m.value)] as const;
    });
  };

  it('gives each budget the allocated, used and remaining GPU-hours /v1/capacity gives', async () => {
    const series = await scrape();
    const capacity = (await t.get('/v1/capacity')).body.data;
    const expected = (figure: 'allocated' | 'used' | 'remaining') => [
      [{ organization_id: 'acme', level: 'organization', budget_id: 'acme' }, capacity.summary[`total_${figure}_gpu_hours`]],
      ...capacity.pools.map((p: JsonBody) => [{ organization_id: 'acme', level: 'pool', budget_id: p.pool_id }, p[`${figure}_gpu_hours`]]),
      ...capacity.initiatives.map((i: JsonBody) => [{ organization_id: 'acme', level: 'initiative', budget_id: i.initiative_id }, i[`${figure}_gpu_hours`]]),
    ];
    const rounded = (samples: Samples) => samples.map(([labels, value]) => [labels, Math.round(value * 1e4) / 1e4]);
    for (const figure of ['allocated', 'used', 'remaining'] as const) {
      expect(rounded(series(`gpucap_budget_${figure}_gpu_hours`)), figure).to.deep.equal(expected(figure));
    }
    // llm: 12 GPUs for 3 hours and 3 × 10 GPU-hours; 700 allocated.
    expect(series('gpucap_budget_remaining_gpu_hours').find(([l]) => l.budget_id === 'llm')?.[1]).to.equal(700 - 36 - 30);
    expect(series('gpucap_aggregates_up')).to.deep.equal([[{}, 1]]);
    expect(series('gpucap_ready')).to.deep.equal([[{}, 1]]);
  });

  it('gives each team of every organization its running GPUs and its workloads by status', async () => {
    const series = await scrape();
    expect(series('gpucap_team_active_gpus')).to.deep.equal([
      [{ organization_id: 'acme', initiative_id: 'llm' }, 12],
      [{ organization_id: 'acme', initiative_id: 'vision' }, 2],
      [{ organization_id: 'globex', initiative_id: 'search' }, 1],
    ]);
    expect(series('gpucap_team_workloads')).to.deep.equal([
      [{ organization_id: 'acme', initiative_id: 'llm', status: 'completed' }, 2],
      [{ organization_id: 'acme', initiative_id: 'llm', status: 'failed' }, 1],
      [{ organization_id: 'acme', initiative_id: 'llm', status: 'running' }, 2],
      [{ organization_id: 'acme', initiative_id: 'vision', status: 'completed' }, 1],
      [{ organization_id: 'acme', initiative_id: 'vision', status: 'running' }, 1],
      [{ organization_id: 'globex', initiative_id: 'search', status: 'running' }, 1],
    ]);
  });

  it('reads the index once for the scrapes of ten seconds, and again after', async () => {
    const reads = sinon.spy(t.service.index, 'teamCounts');
    try {
      await scrape();
      t.clock.advance(9_000);
      await Promise.all([scrape(), scrape()]);
      expect(reads.callCount).to.equal(1);
      t.clock.advance(2_000);
      await scrape();
      expect(reads.callCount).to.equal(2);
    } finally {
      reads.restore();
    }
  });

  it('leaves the gauges out, says so in gpucap_aggregates_up, and still answers /metrics when the index read fails', async () => {
    const failing = sinon.stub(t.service.index, 'teamCounts').rejects(new Error('database gone'));
    try {
      const series = await scrape();
      expect(series('gpucap_aggregates_up')).to.deep.equal([[{}, 0]]);
      expect(series('gpucap_team_active_gpus')).to.deep.equal([]);
      expect(series('gpucap_budget_used_gpu_hours')).to.deep.equal([]);
      expect(series('gpucap_build_info')).to.have.lengthOf(1);
    } finally {
      failing.restore();
    }
    t.clock.advance(60_000);
    expect((await scrape())('gpucap_aggregates_up')).to.deep.equal([[{}, 1]]);
  });
});
