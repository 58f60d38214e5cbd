// `npm run demo`: the real service against a simulated world on loopback: two GPU clusters speaking
// list/watch (gpu-east as the home cluster, gpu-west as a remote kubeconfig), a dcgm-exporter on every
// node, capacity ConfigMaps, a local JWKS and a token per role. Jobs start, finish and fail while it
// runs. It prints the URL and curl commands ready to paste; Ctrl-C stops everything cleanly.
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mintDevJwt } from '../src/auth/dev-jwt.js';
import { loadConfig } from '../src/config/load.js';
import type { Role } from '../src/domain/principal.js';
import { startService } from '../src/main.js';
import { createLogger } from '../src/runtime/logger.js';
import { CAPACITY_NAMESPACE, startDemoWorld } from './demo/world.js';

const devDir = resolve('.gpucap-dev/demo');
const STEP_MS = 4_000;

interface Caller {
  label: string;
  role: Role;
  org: string;
  initiatives: string[];
  variable: string;
}

const CALLERS: readonly Caller[] = [
  { label: 'ORG_ADMIN of acme', role: 'ORG_ADMIN', org: 'acme', initiatives: [], variable: 'ACME_ADMIN' },
  { label: 'TEAM_LEAD of acme (llm, vision)', role: 'TEAM_LEAD', org: 'acme', initiatives: ['llm', 'vision'], variable: 'ACME_LEAD' },
  { label: 'MEMBER of acme (vision)', role: 'MEMBER', org: 'acme', initiatives: ['vision'], variable: 'ACME_MEMBER' },
  { label: 'ORG_ADMIN of globex', role: 'ORG_ADMIN', org: 'globex', initiatives: [], variable: 'GLOBEX_ADMIN' },
];

async function main(): Promise<void> {
  rmSync(devDir, { recursive: true, force: true });
  mkdirSync(devDir, { recursive: true });
  const now = Date.now();
  const world = await startDemoWorld({ dir: devDir, now });
  const tokens = [];
  for (const c of CALLERS) {
    const jwt = await mintDevJwt({ role: c.role, organizationId: c.org, initiatives: c.initiatives, subject: `demo-${c.variable.toLowerCase()}`, ttlSeconds: 12 * 3600, devDir });
    tokens.push({ ...c, token: jwt.token, env: jwt.env });
  }
  const config = loadConfig({
    GPUCAP_LISTEN: process.env.GPUCAP_LISTEN ?? '127.0.0.1:8080',
    GPUCAP_ADMIN_LISTEN: process.env.GPUCAP_ADMIN_LISTEN ?? '127.0.0.1:9090',
    GPUCAP_DB_PATH: join(devDir, 'index.db'),
    GPUCAP_LOG_LEVEL: process.env.GPUCAP_LOG_LEVEL ?? 'warn',
    GPUCAP_SHUTDOWN_GRACE_SECONDS: '2',
    GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
    GPUCAP_KUBECONFIG: world.home.kubeconfigPath,
    GPUCAP_CLUSTER_ID: world.home.name,
    GPUCAP_REMOTE_KUBECONFIG_DIR: world.remoteDir,
    GPUCAP_NAMESPACE: CAPACITY_NAMESPACE,
    GPUCAP_EXPORTER_PORT: String(world.exporterPort),
    GPUCAP_SCRAPE_INTERVAL_SECONDS: '5',
    GPUCAP_INDEX_FLUSH_INTERVAL_MS: '100',
    // Usage figures (idle GPU-hours, efficiency, energy) are saved with each flush: a demo shows them soon.
    GPUCAP_LIFETIME_FLUSH_SECONDS: '10',
    ...(tokens[0]?.env ?? {}),
  });
  const service = await startService(config, { logger: createLogger({ level: config.log_level, version: 'demo' }) });
  await waitUntilReady(`http://${service.adminAddress}/readyz`);
  const churn = setInterval(() => world.step(Date.now()), STEP_MS);

  const url = `http://${service.apiAddress}`;
  const { finished, running, pending } = world.jobs;
  const out: string[] = [
    `\ngpu-capacity-api demo: ${url}   (admin: http://${service.adminAddress}/readyz, /metrics)`,
    `Clusters gpu-east (H100, home) and gpu-west (L40S, remote); ${finished} finished, ${running} running and ${pending} pending Jobs`,
    `of organizations acme, globex and initech; a Job starts, finishes or fails every ${STEP_MS / 1000} s. GPU metrics are scraped every 5 s.\n`,
  ];
  for (const t of tokens) out.push(`export ${t.variable}='${t.token}'   # ${t.label}`);
  const as = (variable: string, org: string) => `curl -s -H "Authorization: Bearer $${variable}" -H "X-Organization-Id: ${org}"`;
  out.push(
    '',
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads?status=running&limit=5'`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?time_range=last_30_days&group_by=initiative_id&queue_percentiles=95'   # with queue time (mean, p95), idle GPU-hours, efficiency, energy`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/metrics?sort_by=gpu_utilization&limit=5'`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?time_range=last_7_days&interval=day&group_by=initiative_id'   # series per day and team`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/stats?group_by=failure_reason'   # why jobs failed`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/capacity'                       # with burn rate and projected exhaustion`,
    `ID=$(${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads?status=running&limit=1' | sed -E 's/.*"workload_id":"([^"]+)".*/\\1/')`,
    `${as('ACME_ADMIN', 'acme')} "${url}/v1/workloads/$ID/metrics?time_range=last_1h&percentiles=50,95,99"`,
    `${as('ACME_ADMIN', 'acme')} "${url}/v1/workloads/$ID"                  # queue_seconds; idle_gpu_hours, gpu_efficiency, energy_kwh after a minute`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/metrics?sort_by=idle_gpu_hours&limit=5'   # lifetime idle GPU-hours (each minute below 5 %)`,
    `${as('ACME_ADMIN', 'acme')} '${url}/v1/workloads/metrics?sort_by=queue_seconds&limit=5'   # who waited longest for GPUs, pending ones so far`,
    `${as('ACME_LEAD', 'acme')} '${url}/v1/workloads?limit=3'                # llm and vision only`,
    `${as('ACME_MEMBER', 'acme')} '${url}/v1/capacity'                       # vision's share`,
    `${as('GLOBEX_ADMIN', 'globex')} '${url}/v1/workloads/stats?group_by=submitted_by'`,
    `curl -s '${url}/v1/health'`,
    `curl -s '${url}/v1/openapi.json' | head -c 300`,
    '',
    'The same from kubectl gpucap (docs/kubectl-gpucap.md), built once with npm run build:kubectl-plugin:',
    `GPUCAP_TOKEN=$ACME_ADMIN GPUCAP_ORG=acme dist/kubectl-gpucap.cjs top --url ${url}`,
    `GPUCAP_TOKEN=$ACME_ADMIN GPUCAP_ORG=acme dist/kubectl-gpucap.cjs capacity --url ${url}`,
    '',
    'Ctrl-C stops the demo.',
  );
  console.log(out.join('\n'));

  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      console.log('\nstopping…');
      clearInterval(churn);
      service
        .stop()
        .then(() => world.close())
        .then(
          () => process.exit(0),
          () => process.exit(1),
        );
    });
  }
}

/** The service answers only once every informer synced and the budgets were listed. */
async function waitUntilReady(readyz: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const status = await fetch(readyz).then((r) => r.status, () => 0);
    if (status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the service did not become ready within 60 s (${readyz})`);
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  process.exit(1);
});
