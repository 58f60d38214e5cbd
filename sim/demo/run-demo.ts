// The demo's service and world together: the simulated clusters, the web console built into the
// demo's folder, a token per role and the real service. `npm run demo` prints what this starts; the
// browser tests and the console's screenshot script start the same.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildConsole } from '../../console/build.mjs';
import { mintDevJwt } from '../../src/auth/dev-jwt.js';
import { loadConfig } from '../../src/config/load.js';
import type { Role } from '../../src/access/principal.js';
import { startService, type RunningService } from '../../src/service/start-service.js';
import { createLogger } from '../../src/runtime/logger.js';
import { CAPACITY_NAMESPACE, startDemoWorld, type DemoWorld } from './world.js';

export interface DemoCaller {
  label: string;
  role: Role;
  org: string;
  initiatives: string[];
  variable: string;
}

export const DEMO_CALLERS: readonly DemoCaller[] = [
  { label: 'ORG_ADMIN of acme', role: 'ORG_ADMIN', org: 'acme', initiatives: [], variable: 'ACME_ADMIN' },
  { label: 'TEAM_LEAD of acme (llm, vision)', role: 'TEAM_LEAD', org: 'acme', initiatives: ['llm', 'vision'], variable: 'ACME_LEAD' },
  { label: 'MEMBER of acme (vision)', role: 'MEMBER', org: 'acme', initiatives: ['vision'], variable: 'ACME_MEMBER' },
  { label: 'ORG_ADMIN of globex', role: 'ORG_ADMIN', org: 'globex', initiatives: [], variable: 'GLOBEX_ADMIN' },
];

export interface DemoCallerToken extends DemoCaller {
  token: string;
}

export interface RunningDemo {
  /** The API and console, `http://127.0.0.1:8080`. */
  url: string;
  adminUrl: string;
  world: DemoWorld;
  service: RunningService;
  tokens: DemoCallerToken[];
  /** The caller of DEMO_CALLERS with this variable (`ACME_MEMBER`). */
  caller(variable: string): DemoCallerToken;
  /** The console's sign-in link of a caller: the token rides in the fragment, which is never sent. */
  signInLink(caller: DemoCallerToken): string;
  stop(): Promise<void>;
}

export interface DemoOptions {
  dir: string;
  listen: string;
  adminListen: string;
  logLevel?: string;
  now?: number;
  seed?: number;
}

export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true });
  // The web console as `npm run build` makes it, in the demo's own folder (about 0.2 s).
  const consoleDir = join(options.dir, 'console');
  await buildConsole({ outDir: consoleDir });
  const world = await startDemoWorld({ dir: options.dir, now: options.now ?? Date.now(), ...(options.seed === undefined ? {} : { seed: options.seed }) });
  const tokens: DemoCallerToken[] = [];
  let jwtEnv: Record<string, string> = {};
  for (const c of DEMO_CALLERS) {
    const jwt = await mintDevJwt({ role: c.role, organizationId: c.org, initiatives: c.initiatives, subject: `demo-${c.variable.toLowerCase()}`, ttlSeconds: 12 * 3600, devDir: options.dir });
    tokens.push({ ...c, token: jwt.token });
    jwtEnv = jwt.env;
  }
  const config = loadConfig({
    GPUCAP_LISTEN: options.listen,
    GPUCAP_ADMIN_LISTEN: options.adminListen,
    GPUCAP_DB_PATH: join(options.dir, 'index.db'),
    GPUCAP_LOG_LEVEL: options.logLevel ?? 'warn',
    // The demo listens on loopback only, and the simulated API server answers no TokenReview.
    GPUCAP_ADMIN_AUTH: 'none',
    GPUCAP_SHUTDOWN_GRACE_SECONDS: '2',
    GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
    GPUCAP_KUBECONFIG: world.home.kubeconfigPath,
    GPUCAP_CLUSTER_ID: world.home.name,
    GPUCAP_REMOTE_KUBECONFIG_DIR: world.remoteDir,
    // Both clusters are acme's: its ORG_ADMIN sees their nodes (the fleet) and its pools their hardware.
    GPUCAP_CLUSTER_ORGANIZATION_ID: 'acme',
    GPUCAP_REMOTE_CLUSTERS: JSON.stringify(world.clusters.slice(1).map((c) => ({ file: `${c.name}.kubeconfig`, organization_id: 'acme' }))),
    GPUCAP_NAMESPACE: CAPACITY_NAMESPACE,
    GPUCAP_EXPORTER_PORT: String(world.exporterPort),
    GPUCAP_SCRAPE_INTERVAL_SECONDS: '5',
    GPUCAP_INDEX_FLUSH_INTERVAL_MS: '100',
    // Usage figures (idle GPU-hours, efficiency, energy) are saved with each flush: a demo shows them soon.
    GPUCAP_LIFETIME_FLUSH_SECONDS: '10',
    // The fleet's history (GPU-hours by state) runs a bucket and a flush behind: 15 s instead of 75 s.
    GPUCAP_FLEET_HISTORY_RESOLUTION_SECONDS: '10',
    GPUCAP_FLEET_HISTORY_FLUSH_SECONDS: '5',
    GPUCAP_CONSOLE_ASSETS_DIR: consoleDir,
    ...jwtEnv,
  });
  let service: RunningService;
  try {
    service = await startService(config, { logger: createLogger({ level: config.log_level, version: 'demo' }) });
  } catch (error) {
    await world.close();
    throw error;
  }
  const url = `http://${service.apiAddress}`;
  const adminUrl = `http://${service.adminAddress}`;
  // Ready: every informer synced and the budgets were listed. Then the first scrape of every exporter
  // (one scrape interval later): until it lands, GPU metrics and the rankings by them are empty, and
  // the console opened from a printed link would show a world without telemetry.
  try {
    await waitForReadyz(`${adminUrl}/readyz`, 'become ready', (status) => status === 200 || `HTTP ${status}`);
    await waitForReadyz(`${adminUrl}/readyz`, 'scrape every exporter once', (_status, body) => everyExporterScraped(body));
  } catch (error) {
    await service.stop();
    await world.close();
    throw error;
  }
  return {
    url,
    adminUrl,
    world,
    service,
    tokens,
    caller: (variable) => {
      const found = tokens.find((t) => t.variable === variable);
      if (found === undefined) throw new Error(`no demo caller ${variable}: one of ${tokens.map((t) => t.variable).join(', ')}`);
      return found;
    },
    signInLink: (caller) => `${url}/#token=${caller.token}&org=${caller.org}`,
    stop: async () => {
      await service.stop();
      await world.close();
    },
  };
}

/**
 * Polls the admin port's /readyz until `settled` says its answer is what the demo waits for: true, or
 * a string saying what is still missing (for the error after 60 s).
 */
async function waitForReadyz(readyz: string, what: string, settled: (status: number, body: unknown) => true | string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let missing = 'no answer yet';
  while (Date.now() < deadline) {
    const answer = await fetch(readyz).then(async (r) => ({ status: r.status, body: (await r.json().catch(() => undefined)) as unknown }), () => undefined);
    const verdict = answer === undefined ? 'the admin port did not answer' : settled(answer.status, answer.body);
    if (verdict === true) return;
    missing = verdict;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the demo's service did not ${what} within 60 s (${readyz}): ${missing}`);
}

interface ReadyzExporter {
  key: string;
  lastSuccessAt: string | null;
  lastError: string | null;
}

/** Every exporter the service found has been scraped once: true, or which have not, and why. */
function everyExporterScraped(body: unknown): true | string {
  const exporters = (body as { components?: { telemetry?: { exporters?: ReadyzExporter[] } } }).components?.telemetry?.exporters ?? [];
  if (exporters.length === 0) return 'no exporter found yet';
  const waiting = exporters.filter((e) => e.lastSuccessAt === null);
  if (waiting.length === 0) return true;
  return `${waiting.length} of ${exporters.length} exporters not scraped yet (${waiting.slice(0, 3).map((e) => `${e.key}: ${e.lastError ?? 'no scrape yet'}`).join('; ')})`;
}
