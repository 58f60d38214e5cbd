// kubectl gpucap chargeback against the service watching a simulated cluster, on last month's pods
// (the month has ended, so nothing in its statement moves while the test runs): without prices the
// GPU-hours alone; with acme's prices ConfigMap, created as an operator would, each team's cost and
// the idle, unallocated (an archived node's hours, written to the fleet's history) and total lines,
// per user with the unallocated cost shared; --csv prints the
// service's own file; a MEMBER gets the API's FORBIDDEN and a bad command line is refused before any
// request. The tables are golden files: the month is not in them, and every figure is set by the pods.
import { expect } from 'chai';
import type { FleetHourRow } from '../../../src/domain/fleet-ledger.js';
import { makeTempDir } from '../../support/temp-dir.js';
import { waitFor } from '../../support/wait-for.js';
import { expectGolden } from './golden.js';
import { acmePrices, H100, L40S, runPlugin, startPricedCluster, type FinishedPod, type PricedCluster } from './priced-cluster.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const today = new Date();
const monthStart = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1);
const MONTH = new Date(monthStart).toISOString().slice(0, 7);

/** llm: 10 GPU-hours of alice's and 3 of bob's on H100s (at 4: 52 EUR); vision: 4 of carol's on an L40S (at 1.5: 6 EUR). */
const PODS: FinishedPod[] = [
  { team: 'llm', name: 'train-a', submittedBy: 'alice', node: 'h100', gpus: 2, startedAt: monthStart + 2 * DAY, finishedAt: monthStart + 2 * DAY + 5 * HOUR },
  { team: 'llm', name: 'train-b', submittedBy: 'bob', node: 'h100', gpus: 1, startedAt: monthStart + 3 * DAY, finishedAt: monthStart + 3 * DAY + 3 * HOUR },
  { team: 'vision', name: 'eval', submittedBy: 'carol', node: 'l40s', gpus: 1, startedAt: monthStart + 5 * DAY, finishedAt: monthStart + 5 * DAY + 4 * HOUR },
];

/** An hour of an archived node's 8 H100s in the month, which no pod held: 8 unallocated GPU-hours (32 EUR). */
const unheldHour = (hour: number): FleetHourRow => ({
  clusterId: 'gpu-archive', node: 'old-1', organizationId: 'acme', hour, gpuModel: H100, instanceType: 'p5.48xlarge', capacityType: null,
  capacityMs: 8 * HOUR, unavailableMs: 0, allocatedMs: 0, idleMs: 0,
});

const PRICES = acmePrices('EUR', [{ model: H100, rate: 4 }, { model: L40S, rate: 1.5 }]);

describe('kubectl gpucap chargeback, against the service watching a simulated cluster', function () {
  this.timeout(30_000);
  const temp = makeTempDir('gpucap-cli-chargeback-');
  let cluster: PricedCluster;

  const plugin = (args: string[], token = cluster.service.callers.admin.token) =>
    runPlugin(cluster.service, ['chargeback', ...args], { token, home: temp.path });
  const printed = async (args: string[]) => {
    const { code, out, err } = await plugin(args);
    expect(code, err).to.equal(0);
    return out;
  };
  /** The table of `args`, which fits 100 columns. */
  const tableOf = async (args: string[]) => {
    const out = await printed(args);
    for (const line of out.split('\n')) expect([...line].length, line).to.be.at.most(100);
    return out;
  };
  const statement = async () => (await cluster.service.get(`/v1/chargeback?month=${MONTH}`)).body.data;

  before(async () => {
    cluster = await startPricedCluster(temp.path, { nodes: { h100: H100, l40s: L40S }, teams: ['llm', 'vision'], pods: PODS });
    const hours = [unheldHour(monthStart), unheldHour(monthStart + HOUR)];
    await cluster.service.service.store.writeFleetLedger({ clusterId: 'gpu-archive', expectedMark: null, to: monthStart + 2 * HOUR, hours });
    const counted = async () => {
      const { total } = await statement();
      return total?.gpu_hours === 17 && total.unallocated_gpu_hours === 16 ? true : undefined;
    };
    await waitFor(counted, { what: "the month's 17 GPU-hours held and 16 unheld", timeoutMs: 10_000 });
  });

  after(async () => {
    await cluster?.close();
    temp.remove();
  });

  it('prints the GPU-hours alone without prices', async () => {
    expectGolden('chargeback-unpriced', await tableOf(['--month', MONTH]));
  });

  describe('with prices', () => {
    before(async () => {
      cluster.setPrices(PRICES);
      await waitFor(async () => ((await statement()).currency === 'EUR' ? true : undefined), { what: 'the prices in force', timeoutMs: 10_000 });
    });

    it('prints a line per team with its cost in the currency, then the idle, unallocated and total lines', async () => {
      expectGolden('chargeback', await tableOf(['--month', MONTH]));
    });

    it('splits the teams per user and shares the unallocated cost, with --group-by user --share-idle', async () => {
      expectGolden('chargeback-by-user', await tableOf(['--month', MONTH, '--group-by', 'user', '--share-idle']));
    });

    it("prints the API's data with -o json, and the service's own CSV file with --csv", async () => {
      expect(JSON.parse(await printed(['--month', MONTH, '-o', 'json']))).to.deep.equal(await statement());
      const csv = await cluster.service.getText(`/v1/chargeback?month=${MONTH}&group_by=gpu_model`, { headers: { Accept: 'text/csv' } });
      expect(csv.status).to.equal(200);
      expect(await printed(['--month', MONTH, '--group-by', 'model', '--csv'])).to.equal(csv.text);
      expect(csv.text.split('\r\n').at(-2)).to.match(/^total,/);
    });
  });

  it("exits 1 with the API's FORBIDDEN for a MEMBER, and with what was wrong for a bad command line", async () => {
    const member = await plugin(['--month', MONTH], cluster.service.callers.member.token);
    expect(member.code).to.equal(1);
    expect(member.err).to.match(/^Error: .+ \(FORBIDDEN, request [0-9a-f-]+\)\n$/);
    const cases: [string[], string][] = [
      [['--month', '2026-13'], '--month must be a month as YYYY-MM (2026-11), not "2026-13"'],
      [['--group-by', 'team'], '--group-by must be one of user, pool, model, not "team"'],
      [['--csv', '-o', 'json'], "--csv prints the service's own CSV file: leave out -o"],
      [['--range', 'today'], '--range is not a flag of chargeback (its flags: --month, --group-by, --share-idle, --csv)'],
    ];
    for (const [args, message] of cases) expect(await plugin(args), args.join(' ')).to.deep.include({ code: 1, out: '', err: `${message}\n` });
  });
});
