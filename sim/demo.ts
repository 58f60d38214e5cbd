// `npm run demo`: the real service on loopback, answering from a seeded index, with a local JWKS and
// a token per role, and curl commands ready to paste. Ctrl-C stops it cleanly.
// (The simulated Kubernetes cluster and exporters replace the seed when they land.)
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mintDevJwt } from '../src/auth/dev-jwt.js';
import { loadConfig } from '../src/config/load.js';
import type { Role } from '../src/domain/principal.js';
import { startService } from '../src/main.js';
import { createLogger } from '../src/runtime/logger.js';
import { seedWorkloads } from './seed-workloads.js';

const devDir = resolve('.gpucap-dev/demo');
const dbPath = join(devDir, 'demo.db');

async function main(): Promise<void> {
  rmSync(dbPath, { force: true });
  rmSync(`${dbPath}-wal`, { force: true });
  rmSync(`${dbPath}-shm`, { force: true });
  const callers: { label: string; role: Role; org: string; initiatives: string[] }[] = [
    { label: 'ORG_ADMIN of acme', role: 'ORG_ADMIN', org: 'acme', initiatives: [] },
    { label: 'TEAM_LEAD of acme (llm, vision)', role: 'TEAM_LEAD', org: 'acme', initiatives: ['llm', 'vision'] },
    { label: 'MEMBER of acme (vision)', role: 'MEMBER', org: 'acme', initiatives: ['vision'] },
  ];
  const tokens = [];
  for (const c of callers) {
    const jwt = await mintDevJwt({ role: c.role, organizationId: c.org, initiatives: c.initiatives, subject: `demo-${c.role.toLowerCase()}`, ttlSeconds: 12 * 3600, devDir });
    tokens.push({ ...c, token: jwt.token, env: jwt.env });
  }
  const env = tokens[0]?.env ?? {};
  const config = loadConfig({
    GPUCAP_LISTEN: process.env.GPUCAP_LISTEN ?? '127.0.0.1:8080',
    GPUCAP_ADMIN_LISTEN: process.env.GPUCAP_ADMIN_LISTEN ?? '127.0.0.1:9090',
    GPUCAP_DB_PATH: dbPath,
    GPUCAP_LOG_LEVEL: process.env.GPUCAP_LOG_LEVEL ?? 'warn',
    GPUCAP_SHUTDOWN_GRACE_SECONDS: '2',
    GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
    // The demo serves a seeded index; watching a simulated cluster comes with issue 6.
    GPUCAP_HOME_CLUSTER_ENABLED: 'false',
    GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
    ...env,
  });
  const service = await startService(config, { logger: createLogger({ level: config.log_level, version: 'demo' }) });
  const seed = seedWorkloads(400, Date.now());
  service.store.upsertWorkloads(seed.workloads);
  service.store.upsertPodIntervals(seed.pods);
  const sample = seed.workloads.find((w) => w.organizationId === 'acme' && w.initiativeId === 'vision')?.workloadId ?? '';

  const url = `http://${service.apiAddress}`;
  const out: string[] = [`\ngpu-capacity-api demo: ${url} (admin: http://${service.adminAddress})`, `${seed.workloads.length} workloads in organizations acme, globex, initech.\n`];
  for (const t of tokens) {
    const curl = `curl -s -H "Authorization: Bearer $TOKEN_${t.role}" -H "X-Organization-Id: ${t.org}"`;
    out.push(`# ${t.label}`, `export TOKEN_${t.role}='${t.token}'`);
    out.push(`${curl} '${url}/v1/workloads?limit=5'`);
    if (t.role === 'ORG_ADMIN') {
      out.push(`${curl} '${url}/v1/workloads/stats?time_range=this_month&group_by=initiative_id'`);
      out.push(`${curl} '${url}/v1/workloads/metrics?sort_by=gpu_hours&limit=5'`);
      out.push(`${curl} '${url}/v1/workloads/${sample}'`);
      out.push(`${curl} '${url}/v1/workloads/${sample}/metrics?time_range=last_6h'`);
      out.push(`${curl} '${url}/v1/capacity'`);
    }
    out.push('');
  }
  out.push(`curl -s '${url}/v1/health'`, `curl -s '${url}/v1/openapi.json'`, `curl -s 'http://${service.adminAddress}/metrics'`, '', 'Ctrl-C stops the demo.');
  console.log(out.join('\n'));

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.log('\nstopping…');
      service.stop().then(() => process.exit(0), () => process.exit(1));
    });
  }
}

main().catch((error: unknown) => {
  console.error(`demo failed: ${(error as Error).message}`);
  process.exit(1);
});
