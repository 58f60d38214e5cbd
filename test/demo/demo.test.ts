// `npm run demo` as a newcomer runs it: the process starts the simulated world and the service,
// prints curl commands, and every printed command answers 200; Ctrl-C (SIGINT) stops it cleanly.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { waitFor } from '../support/wait-for.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface PrintedCall {
  url: string;
  headers: Record<string, string>;
}

/** The requests of the printed `curl -s [-H "Name: value"]... 'url'` lines, variables expanded. */
function printedCalls(output: string, variables: Record<string, string>): PrintedCall[] {
  const expand = (text: string) => text.replace(/\$([A-Z_]+)/g, (_, name: string) => variables[name] ?? `$${name}`);
  return output
    .split('\n')
    .filter((line) => line.startsWith('curl -s') && !line.includes('$ID'))
    .map((line) => {
      const headers: Record<string, string> = {};
      for (const [, name, value] of line.matchAll(/-H "([^:]+): ([^"]*)"/g)) headers[name ?? ''] = expand(value ?? '');
      const url = /'(http[^']+)'/.exec(line)?.[1] ?? '';
      return { url, headers };
    });
}

describe('npm run demo', function () {
  this.timeout(90_000);
  let child: ChildProcess | undefined;
  let output = '';

  before(async () => {
    child = spawn(process.execPath, ['--import', 'tsx', 'sim/demo.ts'], {
      cwd: repoRoot,
      env: { ...process.env, GPUCAP_LISTEN: '127.0.0.1:0', GPUCAP_ADMIN_LISTEN: '127.0.0.1:0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitFor(async () => (output.includes('Ctrl-C stops the demo.') ? true : output.includes('demo failed') ? true : undefined), {
      what: 'the demo to print its commands',
      timeoutMs: 60_000,
    });
    expect(output, output).to.not.include('demo failed');
  });

  after(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
  });

  it('starts with no warning: the first thing a newcomer reads is the demo, not a log line', () => {
    const printed = output.slice(0, output.indexOf('gpu-capacity-api demo:'));
    expect(printed.split('\n').filter((line) => line.startsWith('{')), printed).to.deep.equal([]);
  });

  it('prints a token per role and curl commands that all answer 200 with JSON', async () => {
    const variables = Object.fromEntries([...output.matchAll(/^export ([A-Z_]+)='([^']+)'/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
    expect(Object.keys(variables)).to.have.members(['ACME_ADMIN', 'ACME_LEAD', 'ACME_MEMBER', 'GLOBEX_ADMIN']);
    const calls = printedCalls(output, variables);
    expect(calls.length).to.be.at.least(8);
    for (const call of calls) {
      const response = await fetch(call.url, { headers: call.headers });
      expect(response.status, call.url).to.equal(200);
      expect(await response.json(), call.url).to.be.an('object');
    }
  });

  it('prints a web console sign-in link per role, whose page the service serves', async () => {
    const variables = Object.fromEntries([...output.matchAll(/^export ([A-Z_]+)='([^']+)'/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
    const links = [...output.matchAll(/^ {2}(\S.*?) +(http:\/\/\S+\/#token=([^&\s]+)&org=([a-z]+))$/gm)].map((m) => ({ label: m[1], url: m[2] ?? '', token: m[3], org: m[4] }));
    expect(links.map((l) => l.token)).to.deep.equal(Object.values(variables));
    expect(links.map((l) => l.org)).to.deep.equal(['acme', 'acme', 'acme', 'globex']);
    // The fragment stays in the browser; the page itself needs no credentials.
    const page = await fetch(links[0]?.url ?? '');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(await page.text()).to.match(/<script type="module" src="\/ui\/console-[A-Z0-9]{8}\.js"><\/script>/);
  });

  it('serves live workloads of both clusters, with GPU metrics, usage, budgets and roles applied', async function () {
    this.timeout(90_000);
    const base = /gpu-capacity-api demo: (http:\/\/[^\s]+)/.exec(output)?.[1] ?? '';
    const token = /^export ACME_ADMIN='([^']+)'/m.exec(output)?.[1] ?? '';
    const get = async (path: string) => (await fetch(base + path, { headers: { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' } })).json() as Promise<{ data: Record<string, unknown> }>;
    const running = (await get('/v1/workloads?status=running&limit=100')).data.workloads as { workload_id: string; instance_type: string }[];
    expect(new Set(running.map((w) => w.instance_type))).to.deep.equal(new Set(['p5.48xlarge', 'g6e.12xlarge']));
    const first = running[0]?.workload_id ?? '';
    const metrics = await waitFor(async () => {
      const body = await get(`/v1/workloads/${first}/metrics?percentiles=50,95,99`);
      return (body.data.metrics as { gpu_utilization: { avg: number | null } }).gpu_utilization.avg === null ? undefined : body.data;
    }, { what: 'GPU metrics of a running workload', timeoutMs: 20_000 });
    expect(metrics.time_range).to.equal('last_1h');
    const utilization = (metrics.metrics as { gpu_utilization: Record<string, number> }).gpu_utilization;
    expect(utilization.p50, 'the median between the least and the most').to.be.within(utilization.min ?? 0, utilization.max ?? 100);
    type Entry = { burn_rate_gpu_hours_per_day: number; projected_used_gpu_hours_at_period_end: number | null };
    const capacity = (await get('/v1/capacity')).data as { summary: Entry & { total_allocated_gpu_hours: number; total_used_gpu_hours: number }; initiatives: (Entry & { initiative_id: string })[] };
    expect(capacity.summary.total_allocated_gpu_hours).to.equal(40000);
    expect(capacity.initiatives.map((i) => i.initiative_id)).to.include('speech');
    const series = (await get('/v1/workloads/stats?time_range=last_7_days&interval=day')).data.series as { workload_count: number }[];
    expect(series, 'a week of days, the demo history in some of them').to.have.length(8);
    expect(series.some((e) => e.workload_count > 0)).to.equal(true);
    // The demo's Jobs wait in the queue before they start, pending ones still.
    const summary = (await get('/v1/workloads/stats?time_range=last_30_days&queue_percentiles=95')).data.summary as { average_queue_seconds: number; p95_queue_seconds: number };
    expect(summary.average_queue_seconds).to.be.above(0);
    expect(summary.p95_queue_seconds, 'the p95 of the demo\'s waits, pending jobs among them').to.be.above(0);
    const waits = (await get('/v1/workloads/metrics?sort_by=queue_seconds&limit=5')).data as { workloads: { queue_seconds: { total: number } }[] };
    expect(waits.workloads.length, 'the demo\'s Jobs ranked by their wait').to.equal(5);
    expect(waits.workloads[0]?.queue_seconds.total).to.be.at.least(summary.p95_queue_seconds);
    const byReason = (await get('/v1/workloads/stats?group_by=failure_reason')).data.grouped as { failure_reason: string | null }[];
    const reasons = byReason.map((g) => g.failure_reason).filter((r) => r !== null);
    expect(reasons.length, `failure reasons of the demo's failed jobs: ${JSON.stringify(reasons)}`).to.be.at.least(3);
    // A running workload's GPUs were sampled: its efficiency and energy are known once the figures are saved.
    const usage = await waitFor(async () => {
      const body = await get(`/v1/workloads/${first}`);
      return body.data.gpu_efficiency === null ? undefined : body.data;
    }, { what: 'usage figures of a running workload', timeoutMs: 40_000 });
    expect(usage.gpu_efficiency).to.be.within(0, 1);
    expect(usage.energy_kwh).to.be.above(0);
    expect(usage.utilization_coverage).to.be.above(0);
    // The demo's history burns GPU-hours, so acme's monthly budget shows a pace and where it ends up.
    expect(capacity.summary.burn_rate_gpu_hours_per_day).to.be.above(0);
    expect(capacity.summary.projected_used_gpu_hours_at_period_end).to.be.at.least(capacity.summary.total_used_gpu_hours);
  });

  it('counts the MIG and time-sliced Jobs by their share of a GPU', async () => {
    const base = /gpu-capacity-api demo: (http:\/\/[^\s]+)/.exec(output)?.[1] ?? '';
    const token = /^export ACME_ADMIN='([^']+)'/m.exec(output)?.[1] ?? '';
    const get = async (path: string) => (await fetch(base + path, { headers: { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' } })).json() as Promise<{ data: Record<string, unknown> }>;
    const running = (await get('/v1/workloads?status=running&limit=100')).data.workloads as { workload_id: string; name: string }[];
    const shares: Record<string, unknown> = {};
    for (const name of ['eval-mig-notebook', 'finetune-mig-3g', 'asr-inference-ts', 'tokenizer-ts']) {
      const id = running.find((w) => w.name === name)?.workload_id;
      expect(id, name).to.be.a('string');
      const w = (await get(`/v1/workloads/${id}`)).data;
      shares[name] = [w.gpu_count, w.allocated_gpus, w.gpu_sharing, w.gpu_model];
    }
    expect(shares).to.deep.equal({
      'eval-mig-notebook': [1, 0.1429, 'mig', 'NVIDIA-H100-80GB-HBM3'],
      'finetune-mig-3g': [2, 0.8571, 'mig', 'NVIDIA-H100-80GB-HBM3'],
      'asr-inference-ts': [2, 0.5, 'time_slicing', 'NVIDIA-L40S'],
      'tokenizer-ts': [1, 0.25, 'time_slicing', 'NVIDIA-L40S'],
    });
  });

  it('counts the DRA Jobs and pods by the devices their claims hold', async () => {
    const base = /gpu-capacity-api demo: (http:\/\/[^\s]+)/.exec(output)?.[1] ?? '';
    const token = /^export ACME_ADMIN='([^']+)'/m.exec(output)?.[1] ?? '';
    const get = async (path: string) => (await fetch(base + path, { headers: { Authorization: `Bearer ${token}`, 'X-Organization-Id': 'acme' } })).json() as Promise<{ data: Record<string, unknown> }>;
    // Two whole H100s; one 1g.10gb MIG device (1/7); one H100 that two standalone pods' shared claim time-slices.
    const expected = {
      'llm-dra-finetune': [2, 2, 'exclusive', 'NVIDIA-H100-80GB-HBM3'],
      'dra-mig-eval': [1, 0.1429, 'mig', 'NVIDIA-H100-80GB-HBM3'],
      'asr-dra-infer-a': [1, 0.5, 'time_slicing', 'NVIDIA-H100-80GB-HBM3'],
      'asr-dra-infer-b': [1, 0.5, 'time_slicing', 'NVIDIA-H100-80GB-HBM3'],
    };
    // The claims and slices come from informers of their own: waited for, in case they land after the pods.
    await waitFor(async () => {
      const running = (await get('/v1/workloads?status=running&limit=100')).data.workloads as { workload_id: string; name: string }[];
      const shares: Record<string, unknown> = {};
      for (const name of Object.keys(expected)) {
        const id = running.find((w) => w.name === name)?.workload_id;
        expect(id, `${name} among the running workloads`).to.be.a('string');
        const w = (await get(`/v1/workloads/${id}`)).data;
        shares[name] = [w.gpu_count, w.allocated_gpus, w.gpu_sharing, w.gpu_model];
      }
      expect(shares).to.deep.equal(expected);
      return true;
    }, { what: 'the DRA workloads\' shares of a GPU', timeoutMs: 10_000, intervalMs: 500 });
  });

  it("shows acme's fleet to its ORG_ADMIN only: both clusters' nodes, two out of service, a failed GPU, an over-committed pool", async () => {
    const base = /gpu-capacity-api demo: (http:\/\/[^\s]+)/.exec(output)?.[1] ?? '';
    const token = (variable: string) => new RegExp(`^export ${variable}='([^']+)'`, 'm').exec(output)?.[1] ?? '';
    const get = (path: string, variable = 'ACME_ADMIN') =>
      fetch(base + path, { headers: { Authorization: `Bearer ${token(variable)}`, 'X-Organization-Id': 'acme' } });
    type Fleet = { now: Record<string, number>; grouped: { key: string; nodes: number }[] };
    const fleet = ((await (await get('/v1/fleet?group_by=cluster_id')).json()) as { data: Fleet }).data;
    // gpu-east: 10 H100 nodes, a MIG, a time-sliced and a DRA node; gpu-west: 12 L40S nodes and 2 L4 ones.
    expect(fleet.now).to.include({ nodes: 27, nodes_unavailable: 2 });
    expect(fleet.grouped.map((g) => [g.key, g.nodes])).to.have.deep.members([['gpu-east', 13], ['gpu-west', 14]]);
    type Node = { node: string; state: string; total_gpus: number; unavailable_gpus: number; unhealthy_gpus: number };
    const nodes = ((await (await get('/v1/fleet/nodes?limit=1000')).json()) as { data: { nodes: Node[] } }).data.nodes;
    const outOfService = nodes.filter((n) => n.state !== 'ready' || n.unhealthy_gpus > 0).map((n) => [n.node, n.state, n.unhealthy_gpus]);
    expect(outOfService).to.deep.equal([
      ['gpu-east-node-08', 'ready', 1],
      ['gpu-east-node-09', 'cordoned', 0],
      ['gpu-west-node-11', 'not_ready', 0],
    ]);
    const cordoned = nodes.find((n) => n.node === 'gpu-east-node-09');
    expect(cordoned?.unavailable_gpus, 'no Job on the cordoned node: all its GPUs are out').to.equal(8);
    const pools = ((await (await get('/v1/capacity')).json()) as { data: { pools: Record<string, unknown>[] } }).data.pools;
    expect(pools.map((p) => [p.pool_id, p.over_committed])).to.deep.equal([['h100', false], ['l40s', false], ['l4', true]]);
    const l4 = pools.find((p) => p.pool_id === 'l4');
    // Two L4 GPUs over the month: 2 × 24 h × its days.
    expect([1344, 1392, 1440, 1488]).to.include(l4?.capacity_gpu_hours_in_period);
    expect((await get('/v1/fleet', 'ACME_MEMBER')).status).to.equal(403);
  });

  it('prints kubectl gpucap lines that answer with tables once the plugin is built', async () => {
    const token = /^export ACME_ADMIN='([^']+)'/m.exec(output)?.[1] ?? '';
    const lines = output.split('\n').filter((line) => line.startsWith('GPUCAP_TOKEN=$ACME_ADMIN GPUCAP_ORG=acme dist/kubectl-gpucap.cjs '));
    expect(lines).to.have.lengthOf(2);
    await promisify(execFile)(process.execPath, ['scripts/build-kubectl-plugin.mjs'], { cwd: repoRoot });
    for (const line of lines) {
      const args = line.split(' ').slice(3);
      const { stdout } = await promisify(execFile)(join(repoRoot, 'dist', 'kubectl-gpucap.cjs'), args, { cwd: repoRoot, env: { PATH: process.env.PATH, GPUCAP_TOKEN: token, GPUCAP_ORG: 'acme' } });
      expect(stdout.split('\n')[0], line).to.match(args[0] === 'top' ? /^NAME\s+TEAM\s+AVG 1H\s+CURRENT$/ : /^BUDGET\s+USED GPU-h\s+ALLOC GPU-h/);
      expect(stdout.split('\n').length, line).to.be.above(3);
    }
  });

  it('stops cleanly on Ctrl-C', async () => {
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child?.kill('SIGINT');
    expect(await exited).to.equal(0);
    expect(output).to.include('stopping');
  });
});
