// `npm run docs:console`: screenshots of every page of the web console into docs/console/, taken in
// Debian's Chromium from the demo's world (the same startDemo as `npm run demo`), with a manifest
// that records the console's source hash, so a test can tell when they no longer show the current code.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDemo } from '../../sim/demo/run-demo.js';
import { CHROMIUM_INSTALL_HINT, chromiumPath, consoleSettled, launchChromium } from './chromium.js';
import { consoleSourceHash } from './source-hash.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const outDir = join(repoRoot, 'docs', 'console');

export interface Shot {
  file: string;
  title: string;
  caller: string;
  path: string;
  viewport: { width: number; height: number };
}

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

async function main(): Promise<void> {
  const chromium = chromiumPath();
  if (chromium === undefined) throw new Error(`Chromium is needed: ${CHROMIUM_INSTALL_HINT}`);
  const dir = join(repoRoot, '.gpucap-dev', 'screenshots');
  const demo = await startDemo({ dir, listen: '127.0.0.1:0', adminListen: '127.0.0.1:0', logLevel: 'error' });
  const browser = await launchChromium(chromium);
  try {
    const admin = demo.caller('ACME_ADMIN');
    const headers = { Authorization: `Bearer ${admin.token}`, 'X-Organization-Id': admin.org };
    // GPU metrics come with the first scrapes (every 5 s) and usage with the first flush (10 s).
    await new Promise((resolve) => setTimeout(resolve, 16_000));
    const running = (await (await fetch(`${demo.url}/v1/workloads/metrics?sort_by=gpu_utilization&limit=1`, { headers })).json()) as { data: { workloads: { workload_id: string }[] } };
    const id = running.data.workloads[0]?.workload_id;
    if (id === undefined) throw new Error('no running workload with GPU metrics in the demo');
    const shots: Shot[] = [
      { file: 'overview.png', title: 'Overview: budgets, burn rate and the last 30 days', caller: 'ACME_ADMIN', path: '/', viewport: DESKTOP },
      { file: 'workloads.png', title: 'Workloads: every filter of the API, keyset paging', caller: 'ACME_ADMIN', path: '/workloads?status=running', viewport: DESKTOP },
      { file: 'workload.png', title: "One workload: its record and GPU metrics per window", caller: 'ACME_ADMIN', path: `/workloads/${id}`, viewport: DESKTOP },
      { file: 'rankings.png', title: 'Rankings by each sort key, with the scope average', caller: 'ACME_ADMIN', path: '/rankings', viewport: DESKTOP },
      { file: 'statistics.png', title: 'Statistics per day and team', caller: 'ACME_ADMIN', path: '/statistics?group_by=initiative_id', viewport: DESKTOP },
      { file: 'fleet.png', title: 'Fleet: the GPUs now, by state over time per model, and every node', caller: 'ACME_ADMIN', path: '/fleet', viewport: DESKTOP },
      { file: 'overview-member.png', title: 'Overview as a MEMBER of vision: only that team', caller: 'ACME_MEMBER', path: '/', viewport: DESKTOP },
      { file: 'overview-phone.png', title: 'Overview at 390 × 844', caller: 'ACME_ADMIN', path: '/', viewport: PHONE },
    ];
    mkdirSync(outDir, { recursive: true });
    for (const shot of shots) {
      const context = await browser.newContext({ viewport: shot.viewport, deviceScaleFactor: 1 });
      const page = await context.newPage();
      await page.goto(demo.signInLink(demo.caller(shot.caller)).replace(`${demo.url}/`, `${demo.url}${shot.path}`));
      await consoleSettled(page);
      await page.screenshot({ path: join(outDir, shot.file) });
      await context.close();
      console.log(`docs/console/${shot.file}: ${shot.title}`);
    }
    const manifest = { source_hash: consoleSourceHash(repoRoot), generated_by: 'npm run docs:console', shots };
    writeFileSync(join(outDir, 'screenshots.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    await browser.close();
    await demo.stop();
  }
}

main().catch((error: unknown) => {
  console.error(`screenshots failed: ${(error as Error).stack ?? String(error)}`);
  process.exit(1);
});
