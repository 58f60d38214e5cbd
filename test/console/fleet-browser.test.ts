// The Fleet page and the over-committed pool in Chromium, against the real service on the demo's
// world (startDemo, as `npm run demo` runs it): what an ORG_ADMIN sees is what the page's own requests
// were answered (the GPUs now, a stacked chart per GPU model whose figures are the series', every node
// with its state, a cordoned and a NotReady one among them), the node state filter and paging, and what
// a MEMBER sees instead (the API's 403 and why). No churn runs, so the nodes hold still.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { consoleSettled, settledAfter } from '../../scripts/console/chromium.js';
import type { DemoCallerToken } from '../../sim/demo/run-demo.js';
import { CORDONED_NODE, NOT_READY_NODE, UNHEALTHY_GPU_NODE } from '../../sim/demo/node-faults.js';
import type { JsonBody } from '../support/service-harness.js';
import { waitFor } from '../support/wait-for.js';
import {
  accessibilityViolations, answersTo, apiAs, cells, column, expectFitsWithoutViolations, PHONE, signInAs, tilesOf, useDemoInChromium, withWatchedPage,
} from './console-browser.js';

const twoDigits = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const oneDigit = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const gpus = (value: number) => twoDigits.format(value);
const gpuHours = (value: number) => `${oneDigit.format(value)} GPU-h`;
/** The chart's layers, bottom to top, as the page names them, and their figures in an interval. */
const LAYERS: [string, (f: JsonBody) => number][] = [
  ['Allocated, busy', (f) => Math.max(0, f.allocated_gpu_hours - f.idle_gpu_hours)],
  ['Allocated, idle', (f) => f.idle_gpu_hours],
  ['Unallocated', (f) => f.unallocated_gpu_hours],
  ['Unavailable', (f) => f.unavailable_gpu_hours],
];

describe('web console Fleet page in Chromium', function () {
  this.timeout(180_000);
  const running = useDemoInChromium('gpucap-console-fleet-');

  before(async function () {
    // The history runs a bucket and a flush behind (15 s in the demo): the chart has figures once the first one is in.
    await waitFor(async () => (await api(running.demo.caller('ACME_ADMIN'), '/fleet?time_range=today')).data.summary.capacity_gpu_hours > 0, {
      what: "the fleet's first GPU-hours in its history",
      timeoutMs: 60_000,
      intervalMs: 1000,
    });
  });

  const as = (who: DemoCallerToken) => ({ headers: { Authorization: `Bearer ${who.token}`, 'X-Organization-Id': who.org } });
  const api = (who: DemoCallerToken, path: string) => apiAs(running.demo, who, path);
  const signIn = (page: Page, who: DemoCallerToken) => signInAs(running.demo, page, who);
  // Through the navigation, as a user goes there (and as a test of that link).
  const fleetLink = (page: Page) => page.locator('header nav').getByRole('link', { name: 'Fleet' });
  const openFleet = (page: Page) => answersTo(page, ['/fleet', '/fleet/nodes'], () => fleetLink(page).click());
  const applyFleet = (page: Page) => answersTo(page, ['/fleet', '/fleet/nodes'], () => page.getByRole('button', { name: 'Apply' }).click());

  it('shows an ORG_ADMIN the GPUs now, a stacked chart per GPU model and every node with its state', async () => {
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, running.demo.caller('ACME_ADMIN'));
      const [fleet, nodes] = await openFleet(page);
      expect(new URL(page.url()).pathname).to.equal('/fleet');
      expect(await page.locator('h1').innerText()).to.equal('Fleet of acme');
      expect(await page.locator('header nav a[aria-current="page"]').innerText()).to.equal('Fleet');

      const now = fleet.data.now;
      expect(now).to.include({ nodes: 27, nodes_unavailable: 2 });
      expect(await tilesOf(page, 'now-title')).to.deep.equal([
        ['Total GPUs', gpus(now.total_gpus)],
        ['Allocated GPUs', gpus(now.allocated_gpus)],
        ['Unallocated GPUs', gpus(now.unallocated_gpus)],
        ['Unavailable GPUs', gpus(now.unavailable_gpus)],
        ['Nodes', '27'],
        ['Nodes unavailable', '2'],
      ]);
      const models = fleet.data.grouped.map((g: JsonBody) => g.key as string);
      expect(models).to.have.members(['NVIDIA-H100-80GB-HBM3', 'NVIDIA-L40S', 'NVIDIA-L4']);
      expect(await column(page, 'fleet-models', 0)).to.deep.equal(models);

      // The default range is the last 30 days, per day: one chart of every model, then one per model.
      expect(fleet.data.time_range).to.equal('last_30_days');
      const series = fleet.data.series as JsonBody[];
      expect(series.some((entry) => entry.capacity_gpu_hours > 0), 'GPU-hours in the series').to.equal(true);
      const figures = page.locator('figure.chart-figure');
      expect(await figures.locator('figcaption').allInnerTexts()).to.deep.equal([
        'All GPU models: GPU-hours per day (UTC) by state',
        ...models.map((model: string) => `${model}: GPU-hours per day (UTC) by state`),
      ]);
      await figures.nth(models.length).locator('.chart canvas').first().waitFor();
      expect(await figures.locator('.chart canvas').count(), 'a canvas per chart').to.be.at.least(models.length + 1);
      // uPlot's legend lists the layers top first, as they stack.
      const legend = await figures.first().locator('.u-legend .u-series th').allInnerTexts();
      expect(legend.slice(1).map((label) => label.trim())).to.deep.equal(LAYERS.map(([label]) => label).reverse());
      const rows = await cells(figures.first().locator('details table tbody tr'));
      expect(rows).to.deep.equal(series.map((entry) => [entry.start.slice(0, 10), ...LAYERS.map(([, hours]) => gpuHours(hours(entry)))]));
      const l4 = (await cells(figures.nth(1 + models.indexOf('NVIDIA-L4')).locator('details table tbody tr'))).at(-1);
      const l4Last = (series.at(-1)?.grouped as JsonBody[]).find((g) => g.key === 'NVIDIA-L4') as JsonBody;
      expect(l4?.slice(1)).to.deep.equal(LAYERS.map(([, hours]) => gpuHours(hours(l4Last))));

      // Every node on one page (50 by default), in the API's order, each state as a badge.
      expect(nodes.metadata).to.deep.equal({ total_count: 27 });
      expect(await page.locator('table.nodes caption').innerText()).to.equal('27 GPU nodes');
      expect(await column(page, 'nodes', 1)).to.deep.equal(nodes.data.nodes.map((n: JsonBody) => n.node));
      const states = Object.fromEntries((await column(page, 'nodes', 1)).map((node, i) => [node, i]));
      const stateColumn = await column(page, 'nodes', 2);
      expect(stateColumn[states[CORDONED_NODE] ?? -1]).to.equal('cordoned');
      expect(stateColumn[states[NOT_READY_NODE] ?? -1]).to.equal('not ready');
      expect(stateColumn.filter((s) => s !== 'ready')).to.have.length(2);
      expect(await page.locator('table.nodes .badge-node-cordoned').count()).to.equal(1);
      expect(await page.locator('table.nodes .badge-node-not_ready').count()).to.equal(1);
      expect((await column(page, 'nodes', 11))[states[UNHEALTHY_GPU_NODE] ?? -1]).to.equal('1');
      expect(await page.locator('table.nodes strong.unhealthy').count()).to.equal(1);
      expect(await page.locator('nav[aria-label="Pages of nodes"]').innerText()).to.equal('Last page');
      expect(await accessibilityViolations(page)).to.deep.equal([]);
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it('charts per hour for today, filters the nodes by state, and pages through them with Next page', async () => {
    const admin = running.demo.caller('ACME_ADMIN');
    const all = ((await api(admin, '/fleet/nodes?limit=1000')).data.nodes as JsonBody[]).map((n) => n.node as string);
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, admin);
      await openFleet(page);
      await page.getByLabel('Range', { exact: true }).selectOption('today');
      await page.getByLabel('Node state').selectOption('not_ready');
      const [today, notReady] = await applyFleet(page);
      expect(Object.fromEntries(new URL(page.url()).searchParams)).to.deep.equal({ time_range: 'today', state: 'not_ready' });
      const hours = (Date.parse(today.data.end) - Date.parse(today.data.start)) / 3_600_000;
      expect(today.data.series.length, 'one entry per hour of today').to.equal(hours);
      const caption = await page.locator('figure.chart-figure figcaption').first().innerText();
      expect(caption).to.equal('All GPU models: GPU-hours per hour (UTC) by state');
      expect(notReady.data.nodes.map((n: JsonBody) => n.node)).to.deep.equal([NOT_READY_NODE]);
      expect(await column(page, 'nodes', 1)).to.deep.equal([NOT_READY_NODE]);
      expect(await page.locator('table.nodes caption').innerText()).to.equal('1 GPU node not ready');
      // The page's address works on its own: a reload (or a shared link) shows the same.
      await page.reload();
      await consoleSettled(page);
      expect(await column(page, 'nodes', 1)).to.deep.equal([NOT_READY_NODE]);
      expect(await page.locator('figure.chart-figure figcaption').first().innerText()).to.equal(caption);

      await page.getByLabel('Node state').selectOption('');
      await page.getByLabel('Nodes per page').selectOption('10');
      await settledAfter(page, () => page.getByRole('button', { name: 'Apply' }).click());
      const seen: string[] = [];
      for (let pages = 0; pages < 10; pages += 1) {
        seen.push(...(await column(page, 'nodes', 1)));
        const next = page.getByRole('link', { name: 'Next page' });
        if ((await next.count()) === 0) break;
        await settledAfter(page, () => next.click());
        expect(page.url()).to.include('next_token=');
      }
      expect(seen).to.deep.equal(all);
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it('at 390 × 844 the Fleet page never scrolls sideways, and axe finds nothing', async () => {
    await withWatchedPage(running.browser, async (watched) => {
      await signIn(watched.page, running.demo.caller('ACME_ADMIN'));
      await openFleet(watched.page);
      await expectFitsWithoutViolations(watched.page);
      expect(watched.problems).to.deep.equal([]);
    }, PHONE);
  });

  it("tells a MEMBER that the fleet is for ORG_ADMIN only, with the API's error", async () => {
    const member = running.demo.caller('ACME_MEMBER');
    const refused = await fetch(`${running.demo.url}/v1/fleet`, as(member));
    expect(refused.status).to.equal(403);
    const error = ((await refused.json()) as JsonBody).error;
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, member);
      await settledAfter(page, () => fleetLink(page).click());
      expect(await page.locator('main .notice').innerText()).to.include('shown to organization admins (ORG_ADMIN) only');
      expect(await page.locator('main .error').innerText()).to.include(`${error.code} (HTTP 403): ${error.message}`);
      expect(await page.locator('main table, main figure').count(), 'no fleet figures').to.equal(0);
      expect(await accessibilityViolations(page)).to.deep.equal([]);
      // Chromium logs each refused request as a console error too.
      expect(watched.problems.filter((p) => !p.includes('403'))).to.deep.equal([]);
    }, undefined, [403]);
  });

  for (const variable of ['ACME_ADMIN', 'ACME_MEMBER']) {
    it(`marks the over-committed pool on the overview, with its budget and its hardware (${variable})`, async () => {
      await withWatchedPage(running.browser, async (watched) => {
        const { page } = watched;
        const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/capacity');
        await signIn(page, running.demo.caller(variable));
        const pools = ((await (await answered).json()) as JsonBody).data.pools as JsonBody[];
        expect(pools.map((p) => [p.pool_id, p.over_committed])).to.deep.equal([['h100', false], ['l40s', false], ['l4', true]]);
        const rows = page.locator('ul[aria-label="Capacity pools"] li.budget');
        for (const [i, pool] of pools.entries()) {
          const row = rows.nth(i);
          expect(await row.locator('.budget-name').innerText()).to.equal(`${pool.name} (${pool.instance_types.join(', ')})`);
          if (pool.over_committed) {
            expect(await row.locator('.over-committed .badge').innerText()).to.equal('over-committed');
            const figures = `budget ${gpuHours(pool.allocated_gpu_hours)} against ${gpuHours(pool.capacity_gpu_hours_in_period)}`;
            expect(await row.locator('.over-committed').innerText()).to.equal(`over-committed ${figures} of hardware in the period`);
          } else {
            expect(await row.locator('.over-committed').count(), pool.pool_id).to.equal(0);
            const hardware = `Hardware in the period: ${gpuHours(pool.capacity_gpu_hours_in_period)}`;
            expect(await row.locator('.pool-hardware').innerText()).to.equal(hardware);
          }
        }
        expect(await accessibilityViolations(page)).to.deep.equal([]);
        expect(watched.problems).to.deep.equal([]);
      });
    });
  }
});
