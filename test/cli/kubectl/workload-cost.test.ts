// kubectl gpucap workload ID with and without prices (docs/api.md, "Cost"), against the real service
// watching a simulated cluster, whose prices ConfigMap is created as an operator would: without it the
// table has no cost line; with it, cost in the currency split across a price change, "unpriced" for GPU
// time no rate matched, and the unpriced GPU-hours.
import { expect } from 'chai';
import { makeTempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait-for.js';
import { acmePrices, H100, L40S, runPlugin, startPricedCluster, type PricedCluster } from './priced-cluster.js';

const HOUR = 3_600_000;
const COST_FIELDS = ['currency', 'cost', 'energy_cost', 'unpriced_gpu_hours'];

/** H100s at 4 EUR a GPU-hour until `change`, 3 after; no rate for L40S; energy not priced. */
const pricesYaml = (change: number) => acmePrices('EUR', [{ model: H100, rate: 4, to: change }, { model: H100, rate: 3, from: change }]);

describe('kubectl gpucap workload: the cost lines', function () {
  this.timeout(30_000);
  const temp = makeTempDir('gpucap-cli-cost-');
  let cluster: PricedCluster;
  // Whole hours in the past: each pod held 2 GPUs for an hour before the change and an hour after it (4 GPU-hours).
  const change = Math.floor(Date.now() / HOUR) * HOUR - HOUR;

  before(async () => {
    const pods = [['train-h100', 'h100'], ['train-l40s', 'l40s']].map(([name, node]) => ({
      team: 'llm', name: name as string, node: node as string, gpus: 2, startedAt: change - HOUR, finishedAt: change + HOUR,
    }));
    cluster = await startPricedCluster(temp.path, { nodes: { h100: H100, l40s: L40S }, teams: ['llm'], pods });
  });

  after(async () => {
    await cluster?.close();
    temp.remove();
  });

  const idOf = (name: string) =>
    waitFor(async () => {
      const list = await cluster.service.get('/v1/workloads?limit=100');
      return (list.body?.data?.workloads as { workload_id: string; name: string }[] | undefined)?.find((w) => w.name === name)?.workload_id;
    }, { what: `workload ${name}`, timeoutMs: 10_000 });

  /** The table's lines of `kubectl gpucap workload ID`, field to value. */
  const shown = async (id: string): Promise<Record<string, string>> => {
    const { code, out, err } = await runPlugin(cluster.service, ['workload', id], { token: cluster.service.callers.admin.token, home: temp.path });
    expect(code, err).to.equal(0);
    return Object.fromEntries(out.trimEnd().split('\n').slice(1).map((line) => /^(\S+)\s+(.*)$/.exec(line)?.slice(1, 3) ?? [line, '']));
  };

  it('prints no cost line without prices', async () => {
    for (const name of ['train-h100', 'train-l40s']) {
      const lines = await shown(await idOf(name));
      expect(lines).to.have.property('gpu_hours_used', '4.0 GPU-h');
      expect(lines, name).to.not.have.any.keys(...COST_FIELDS);
    }
  });

  it('prints the cost in the currency, "unpriced" where no rate matched, and the unpriced GPU-hours', async () => {
    cluster.setPrices(pricesYaml(change));
    const [h100, l40s] = [await idOf('train-h100'), await idOf('train-l40s')];
    const priced = async () => ((await cluster.service.get(`/v1/workloads/${h100}`)).body?.data.cost === undefined ? undefined : true);
    await waitFor(priced, { what: 'the prices in force', timeoutMs: 10_000 });
    // 2 GPUs for an hour at 4, then an hour at 3.
    expect(await shown(h100)).to.include({ currency: 'EUR', cost: '14.00 EUR', energy_cost: '-', unpriced_gpu_hours: '0.0 GPU-h' });
    expect(await shown(l40s)).to.include({ currency: 'EUR', cost: 'unpriced', energy_cost: '-', unpriced_gpu_hours: '4.0 GPU-h' });
  });
});
