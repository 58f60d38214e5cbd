// kubectl gpucap against the real service over loopback (--url): each command's table against a
// golden file (test/cli/kubectl/golden/, regenerated with UPDATE_GOLDEN=1), the other formats against
// the API's own answers, paging, --watch, the credentials' order, and the exit codes and messages of
// errors. The executable itself runs once as a child process.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parse as parseCsv } from 'csv-parse/sync';
import { expect } from 'chai';
import sinon from 'sinon';
import { parse as parseYaml } from 'yaml';
import { run, type RunContext } from '../../../src/cli/kubectl/run.js';
import { noBudgets } from '../../../src/query/empty-sources.js';
import { ACME_BUDGET } from '../../support/acme-budget.js';
import { startTestService, type JsonBody, type TestService } from '../../support/service-harness.js';
import { freePorts } from '../../support/free-port.js';
import { makeTempDir } from '../../support/temp-dir.js';
import { aPodInterval, aWorkload } from '../../support/workload-builder.js';
import { expectGolden } from './golden.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const BUDGET = ACME_BUDGET;
const at = (iso: string) => Date.parse(iso);
const id = (n: number) => `cc000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe('kubectl gpucap (--url, against the real service)', function () {
  this.timeout(60_000);
  let t: TestService;
  const temp = makeTempDir('gpucap-cli-');
  // 130 workloads: more than a page of the API (100), over two teams.
  const workloads = Array.from({ length: 130 }, (_, n) => {
    const submittedAt = at('2026-11-20T00:00:00Z') + n * 300_000;
    const status = n === 129 ? 'pending' : n % 5 === 0 ? 'running' : n % 7 === 0 ? 'failed' : 'completed';
    return aWorkload({
      workloadId: id(n), name: n === 128 ? 'a-very-long-training-job-name-that-does-not-fit-in-its-column-at-all' : `train-${n}`,
      initiativeId: n % 3 === 0 ? 'vision' : 'llm', submittedBy: n % 2 === 0 ? 'alice' : 'bob', instanceType: 'p5.48xlarge', gpuCount: 1 + (n % 8), status,
      submittedAt, startedAt: status === 'pending' ? null : submittedAt + 60_000, completedAt: status === 'pending' || status === 'running' ? null : submittedAt + 1_860_000,
      exitCode: status === 'failed' ? 1 : status === 'completed' ? 0 : null, ...(status === 'failed' ? { failureReason: 'oom_killed' as const } : {}),
    });
  });

  before(async () => {
    sinon.stub(noBudgets, 'budgetFor').callsFake((org: string) => (org === 'acme' ? BUDGET : undefined));
    t = await startTestService({ now: '2026-11-20T12:00:00Z' });
    await t.service.store.upsertWorkloads(workloads);
    await t.service.store.upsertPodIntervals(workloads.filter((w) => w.startedAt !== null).map((w) => aPodInterval(w)));
  });
  after(async () => {
    sinon.restore();
    await t.stop();
    temp.remove();
  });

  interface Result {
    code: number;
    out: string;
    err: string;
  }
  const cli = async (args: string[], overrides: Partial<RunContext> = {}): Promise<Result> => {
    let out = '';
    let err = '';
    const code = await run(args, {
      env: { HOME: temp.path },
      out: (text) => (out += text),
      err: (text) => (err += text),
      now: () => t.clock.now(),
      connect: () => Promise.reject(new Error('no kubeconfig in this test')),
      ...overrides,
    });
    // The token is never printed, whatever happened.
    expect(out + err).not.to.include(t.callers.admin.token).and.not.to.include(t.callers.member.token);
    return { code, out, err };
  };
  const as = (caller = t.callers.admin) => ['--url', t.url, '--token', caller.token, '--org', caller.organizationId];
  /** The caller's credentials from the environment: no --token, so stderr holds only what the test is about. */
  const withEnv = (caller = t.callers.admin): Partial<RunContext> => ({ env: { HOME: temp.path, GPUCAP_TOKEN: caller.token, GPUCAP_ORG: caller.organizationId } });
  const ok = async (args: string[]) => {
    const result = await cli([...args, ...as()]);
    expect(result.code, result.err).to.equal(0);
    return result.out;
  };

  describe('tables (golden files, at most 100 columns, with units)', () => {
    const tables: [string, string[]][] = [
      ['workloads', ['workloads', '--limit', '6']],
      ['workloads-wide', ['workloads', '--limit', '3', '-o', 'wide']],
      ['workloads-long-name', ['workloads', '--status', 'completed', '--team', 'llm', '--limit', '2']],
      ['workload', ['workload', id(12)]],
      ['stats-by-team', ['stats', '--range', 'today', '--by', 'team']],
      ['metrics', ['metrics', id(5)]],
      ['top-gpu-hours', ['top', '--by', 'gpu_hours', '--limit', '5']],
      ['capacity', ['capacity']],
      ['health', ['health']],
    ];
    for (const [name, args] of tables) {
      it(`kubectl gpucap ${args.join(' ')}`, async () => {
        const out = await ok(args);
        expectGolden(name, out);
        if (!args.includes('wide')) for (const line of out.split('\n')) expect([...line].length, line).to.be.at.most(100);
      });
    }
  });

  it('lists every page of workloads unless --limit says otherwise, and filters like the API', async () => {
    const all = parseYaml(await ok(['workloads', '-o', 'yaml'])) as { workloads: JsonBody[]; total_count: number };
    expect(all.total_count).to.equal(130);
    expect(all.workloads.map((w) => w.workload_id)).to.have.lengthOf(130).and.deep.equal([...workloads].reverse().map((w) => w.workloadId));
    const running = JSON.parse(await ok(['workloads', '--status', 'running', '--team', 'llm', '-o', 'json'])) as { workloads: JsonBody[] };
    const api = (await t.get('/v1/workloads?status=running&initiative_id=llm&limit=100')).body.data.workloads;
    expect(running.workloads).to.deep.equal(api);
    // Submitted every 5 minutes from midnight until 10:45; 2 hours before noon is 10:00.
    const since = JSON.parse(await ok(['workloads', '--since', '2h', '-o', 'json'])) as { workloads: JsonBody[] };
    expect(since.workloads.map((w) => w.workload_id)).to.deep.equal([129, 128, 127, 126, 125, 124, 123, 122, 121, 120].map(id));
  });

  it('writes csv with the API\'s field names and unformatted values', async () => {
    const records = parseCsv(await ok(['top', '--by', 'gpu_hours', '--limit', '3', '-o', 'csv']), { columns: true }) as Record<string, string>[];
    const api = (await t.get('/v1/workloads/metrics?sort_by=gpu_hours&limit=3')).body.data.workloads;
    expect(records).to.deep.equal(api.map((w: JsonBody) => ({ workload_id: w.workload_id, name: w.name, initiative_id: w.initiative_id, total: String(w.gpu_hours.total) })));
  });

  it('refreshes top with --watch until interrupted', async () => {
    const abort = new AbortController();
    let refreshes = 0;
    const result = await cli(['top', '--watch', '--interval', '2', ...as()], {
      signal: abort.signal,
      sleep: async (ms) => {
        expect(ms).to.equal(2000);
        if (++refreshes === 3) abort.abort();
      },
    });
    expect(result.code).to.equal(0);
    expect(result.out.split('\u001b[H\u001b[2J')).to.have.lengthOf(4);
  });

  it('takes the token and organization from the flags, then GPUCAP_TOKEN and GPUCAP_ORG, then the config file', async () => {
    const env = { HOME: temp.path, GPUCAP_TOKEN: t.callers.member.token, GPUCAP_ORG: 'acme' };
    const member = await cli(['workloads', '-o', 'json', '--url', t.url], { env });
    expect(member.code, member.err).to.equal(0);
    expect(new Set((JSON.parse(member.out) as { workloads: JsonBody[] }).workloads.map((w) => w.initiative_id))).to.deep.equal(new Set(['vision']));
    const flagged = await cli(['workloads', '-o', 'json', '--limit', '1', '--url', t.url, '--token', t.callers.admin.token], { env });
    expect((JSON.parse(flagged.out) as { total_count: number }).total_count).to.equal(130);
    const file = join(temp.path, 'gpucap.yaml');
    writeFileSync(file, `token: ${t.callers.lead.token}\norganization: acme\n`);
    const fromFile = await cli(['health', '-o', 'json', '--url', t.url], { env: { GPUCAP_CONFIG: file } });
    expect(fromFile.code, fromFile.err).to.equal(0);
    writeFileSync(file, 'token: [1, 2]\n');
    const bad = await cli(['health', '--url', t.url], { env: { GPUCAP_CONFIG: file } });
    expect(bad).to.deep.include({ code: 1, err: `${file}: token must be a non-empty string\n` });
    const none = await cli(['health', '--url', t.url], { env: { HOME: temp.path } });
    expect(none.code).to.equal(1);
    expect(none.err).to.equal(`No API token: pass --token, set GPUCAP_TOKEN, or write "token: <token>" in ${join(temp.path, '.config', 'gpucap', 'config.yaml')}\n`);
  });

  it('prints the API\'s message and code and exits 1 for a refused request', async () => {
    const forbidden = await cli(['workloads', '--team', 'llm', '--url', t.url], withEnv(t.callers.member));
    expect(forbidden.code).to.equal(1);
    expect(forbidden.err).to.match(/^Error: .+ \(FORBIDDEN, request [0-9a-f-]+\)\n$/);
    const missing = await cli(['workload', 'nope', '--url', t.url], withEnv());
    expect(missing.code).to.equal(1);
    expect(missing.err).to.match(/^Error: Workload "nope" was not found \(NOT_FOUND, request .+\)\n$/);
    const badToken = await cli(['health', '--url', t.url, '--token', 'gca_wrong', '--org', 'acme']);
    expect(badToken.code).to.equal(0); // health needs no credentials
    const refused = await cli(['workloads', '--url', t.url, '--token', 'gca_wrong', '--org', 'acme']);
    expect(refused.code).to.equal(1);
    expect(refused.err).to.match(/\(UNAUTHENTICATED, request /);
  });

  it('exits 1 with what was wrong for a bad command line, before any request', async () => {
    const cases: [string[], string][] = [
      [['workloads', '--status', 'lost'], '--status must be one of pending, running, completed, failed, cancelled, not "lost"'],
      [['workloads', '--since', 'yesterday'], '--since must be a duration back from now (90m, 24h, 7d) or a date (2026-11-01, 2026-11-01T09:00:00Z), not "yesterday"'],
      [['top', '--by', 'temperature'], '--by must be one of gpu_utilization, memory_utilization, power_usage, gpu_hours, not "temperature"'],
      [['stats', '--watch'], '--watch is not a flag of stats (its flags: --range, --by)'],
      [['metrics'], 'kubectl gpucap metrics needs a workload ID'],
      [['launch'], 'Unknown command "launch" (commands: workloads, workload, stats, metrics, top, capacity, fleet, nodes, chargeback, health)'],
      [['health', '-o', 'xml'], '--output must be one of table, wide, json, yaml, csv, not "xml"'],
      [['health', '--url', 'ftp://x'], '--url must be an http:// or https:// URL, not "ftp://x"'],
    ];
    for (const [args, message] of cases) {
      const result = await cli([...args, ...(args.includes('--url') ? ['--token', 't', '--org', 'acme'] : as())]);
      expect(result, args.join(' ')).to.deep.include({ code: 1, out: '', err: `${message}\n` });
    }
  });

  it('exits 2 when the service cannot be reached, or when the way to it fails', async () => {
    const [closed] = await freePorts(1);
    const unreachable = await cli(['health', '--url', `http://127.0.0.1:${closed}`], withEnv());
    expect(unreachable).to.deep.include({ code: 2, err: `Cannot reach the service at http://127.0.0.1:${closed}: connect ECONNREFUSED 127.0.0.1:${closed}\n` });
    const noCluster = await cli(['health'], withEnv());
    expect(noCluster).to.deep.include({ code: 2, err: 'Error: no kubeconfig in this test\n' });
  });

  it('runs as the kubectl-gpucap executable, with its exit codes', async () => {
    const exec = (args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/kubectl/kubectl-gpucap.ts', ...args], { cwd: REPO, env: { PATH: process.env.PATH, HOME: temp.path } })
        .then(({ stdout }) => ({ code: 0, stdout }), (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout + e.stderr }));
    const health = await exec(['health', ...as(), '-o', 'json']);
    expect(health.code).to.equal(0);
    expect(JSON.parse(health.stdout)).to.include({ status: 'healthy' });
    expect((await exec(['workloads', '--limit', 'x', ...as()])).code).to.equal(1);
    const [closed] = await freePorts(1);
    expect((await exec(['health', '--url', `http://127.0.0.1:${closed}`, '--token', 't', '--org', 'acme'])).code).to.equal(2);
  });
});
