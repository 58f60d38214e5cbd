// The Chargeback page and the costs of the Statistics page and the Overview in Chromium, against the
// real service on the demo's world, whose acme has prices (sim/demo/prices.ts) and globex none. What
// a user sees is checked against what the page's own requests were answered (the world is live:
// running workloads' GPU time grows between two requests): as ORG_ADMIN of acme, the current month's
// statement, each row and the idle, unallocated and total lines under them, in dollars; the CSV the
// Download CSV button saves, under the name the service gave it; the split per submitter with the
// unallocated cost shared, and another month, kept in the URL. As ORG_ADMIN of globex the GPU-hours
// and the words that no prices are configured; as a MEMBER the API's 403 and why.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Page, Response } from 'playwright-core';
import type { DemoCallerToken } from '../../sim/demo/run-demo.js';
import type { JsonBody } from '../support/service-harness.js';
import {
  accessibilityViolations, answersTo, cells, column, expectFitsWithoutViolations, PHONE, signInAs, tilesOf, useDemoInChromium, withWatchedPage,
} from './console-browser.js';

const oneDigit = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const twoDigits = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
const dollars = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const gpuHours = (value: number) => `${oneDigit.format(value)} GPU-h`;
const kwh = (value: number) => `${twoDigits.format(value)} kWh`;
const money = (value: number | null) => (value === null ? '—' : dollars.format(value));
const CURRENT_MONTH = new Date().toISOString().slice(0, 7);

/** The table's cells of a statement the API answered: its rows, then its idle, unallocated and total lines. */
function expectedTable(c: JsonBody): { rows: string[][]; foot: string[][] } {
  const key = (r: JsonBody) => (c.group_by === null ? [] : [r.key ?? 'none']);
  const blankKey = c.group_by === null ? [] : [''];
  const priced = c.currency !== null;
  const shared = priced && c.unallocated.shared;
  const rows = (c.rows as JsonBody[]).map((r) => [
    r.initiative_id, ...key(r), gpuHours(r.gpu_hours), gpuHours(r.idle_gpu_hours), kwh(r.energy_kwh),
    ...(priced ? [money(r.cost), money(r.idle_cost), money(r.energy_cost), ...(shared ? [money(r.shared_unallocated_cost)] : []), money(r.total_cost)] : []),
  ]);
  const t = c.total;
  const moneyCells = (cost: string, idle: string, energy: string, share: string, total: string) =>
    (priced ? [cost, idle, energy, ...(shared ? [share] : []), total] : []);
  const foot = [
    ['Idle (included in cost)', ...blankKey, '', gpuHours(c.idle.gpu_hours), '', ...moneyCells('', money(c.idle.cost), '', '', '')],
    [shared ? 'Unallocated (shared into the rows)' : 'Unallocated (held by no pod)', ...blankKey, gpuHours(c.unallocated.gpu_hours), '', '',
      ...moneyCells('', '', '', '', shared ? 'in the rows' : money(c.unallocated.cost))],
    ['Total', ...blankKey, gpuHours(t.gpu_hours), gpuHours(t.idle_gpu_hours), kwh(t.energy_kwh),
      ...moneyCells(money(t.cost), money(t.idle_cost), money(t.energy_cost), money(t.unallocated_cost), money(t.total_cost))],
  ];
  return { rows, foot };
}

describe('web console Chargeback page and costs in Chromium', function () {
  this.timeout(180_000);
  const running = useDemoInChromium('gpucap-console-chargeback-');

  const caller = (variable: string) => running.demo.caller(variable);
  const signIn = (page: Page, who: DemoCallerToken, path = '/') => signInAs(running.demo, page, who, path);
  const chargebackLink = (page: Page) => page.locator('header nav').getByRole('link', { name: 'Chargeback' });
  const openChargeback = async (page: Page) => (await answersTo(page, ['/chargeback'], () => chargebackLink(page).click()))[0] as JsonBody;
  const apply = async (page: Page) => (await answersTo(page, ['/chargeback'], () => page.getByRole('button', { name: 'Apply' }).click()))[0] as JsonBody;
  const headers = (page: Page) => page.locator('table.chargeback thead th').allInnerTexts();
  /** The statement the page shows: its rows and the lines under them. */
  const shown = async (page: Page) => ({ rows: await cells(page.locator('table.chargeback tbody tr')), foot: await cells(page.locator('table.chargeback tfoot tr')) });
  /** Clicks Download CSV: the file the browser saved, and the answer it was made of. */
  const download = async (page: Page) => {
    const answered = page.waitForResponse((r: Response) => new URL(r.url()).pathname === '/v1/chargeback' && r.request().headers().accept === 'text/csv');
    const saved = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const [file, response] = await Promise.all([saved, answered]);
    const path = await file.path();
    return { name: file.suggestedFilename(), text: readFileSync(path, 'utf8'), response };
  };

  it("shows an ORG_ADMIN the month's statement, in the prices' currency, and downloads it as the service's CSV file", async () => {
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, caller('ACME_ADMIN'));
      const answer = await openChargeback(page);
      expect(new URL(page.url()).pathname).to.equal('/chargeback');
      expect(await page.locator('h1').innerText()).to.equal('Chargeback of acme');
      expect(await page.locator('header nav a[aria-current="page"]').innerText()).to.equal('Chargeback');

      // The current UTC month by default, billed up to now.
      expect(await page.getByLabel('Month (UTC)').inputValue()).to.equal(CURRENT_MONTH);
      const c = answer.data;
      expect(c).to.include({ month: CURRENT_MONTH, complete: false, currency: 'USD', group_by: null, share_idle: false });
      expect(c.rows, 'acme used GPU time this month').to.not.be.empty;
      expect(await page.locator('main h2').innerText()).to.equal(`Statement for ${CURRENT_MONTH}`);
      expect(await page.locator('main').innerText()).to.include('the month is not over, and its figures still grow');
      expect(await tilesOf(page)).to.deep.equal([
        ['Total cost', money(c.total.total_cost)],
        ['GPU-hours', gpuHours(c.total.gpu_hours)],
        ['Idle cost', money(c.total.idle_cost)],
        ['Unallocated cost', money(c.total.unallocated_cost)],
        ['Currency', 'USD'],
      ]);
      expect(await headers(page)).to.deep.equal(['Team', 'GPU-hours', 'Idle GPU-hours', 'Energy', 'Cost', 'Idle cost', 'Energy cost', 'Total cost']);
      expect(await shown(page)).to.deep.equal(expectedTable(c));
      expect(await page.locator('table.chargeback caption').innerText()).to.equal(`Chargeback for ${CURRENT_MONTH}, by team`);
      expect(await page.locator('main').innerText()).to.include(c.rounding);

      const csv = await download(page);
      expect(csv.response.headers()['content-disposition']).to.equal(`attachment; filename="chargeback-acme-${CURRENT_MONTH}.csv"`);
      expect(csv.name).to.equal(`chargeback-acme-${CURRENT_MONTH}.csv`);
      const records = parseCsv(csv.text, { columns: true }) as Record<string, string>[];
      expect(records.map((r) => r.line)).to.deep.equal([...c.rows.map(() => 'row'), 'idle (included in cost)', 'unallocated', 'total']);
      expect(records.filter((r) => r.line === 'row').map((r) => r.initiative_id)).to.have.members(c.rows.map((r: JsonBody) => r.initiative_id));
      expect(new Set(records.map((r) => `${r.month} ${r.currency}`))).to.deep.equal(new Set([`${CURRENT_MONTH} USD`]));
      expect(await page.locator('.download').innerText()).to.include(`Saved as chargeback-acme-${CURRENT_MONTH}.csv`);
      expect(await accessibilityViolations(page)).to.deep.equal([]);
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it('splits each team per submitter with the unallocated cost shared, and another month, keeping both in the URL', async () => {
    const previous = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, caller('ACME_ADMIN'));
      await openChargeback(page);
      await page.getByLabel('Split each team by').selectOption('submitted_by');
      await page.getByLabel('Share the unallocated cost over the rows').check();
      const split = (await apply(page)).data;
      expect(Object.fromEntries(new URL(page.url()).searchParams)).to.deep.equal({ group_by: 'submitted_by', share_idle: 'true' });
      expect(split).to.include({ group_by: 'submitted_by', share_idle: true });
      expect(await headers(page)).to.include.members(['Submitted by', 'Shared unallocated cost']);
      expect(await column(page, 'chargeback', 1)).to.deep.equal(split.rows.map((r: JsonBody) => r.key));
      expect(await shown(page)).to.deep.equal(expectedTable(split));

      // The demo's history reaches into last month: a month that has ended, its statement complete.
      await page.getByLabel('Month (UTC)').fill(previous);
      const last = (await apply(page)).data;
      expect(Object.fromEntries(new URL(page.url()).searchParams)).to.deep.equal({ month: previous, group_by: 'submitted_by', share_idle: 'true' });
      expect(last).to.include({ month: previous, complete: true });
      expect(await page.locator('main h2').innerText()).to.equal(`Statement for ${previous}`);
      expect(await page.locator('main').innerText()).to.not.include('the month is not over');
      expect(await shown(page)).to.deep.equal(expectedTable(last));
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it('shows an organization without prices its GPU-hours and says that no prices are configured', async () => {
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, caller('GLOBEX_ADMIN'));
      const c = (await openChargeback(page)).data;
      expect(c).to.include({ organization_id: 'globex', currency: null });
      expect(c.total.total_cost).to.equal(null);
      expect(await page.locator('main .notice').innerText()).to.include('No prices are configured for globex: the statement shows GPU-hours only.');
      expect(await tilesOf(page)).to.deep.equal([
        ['GPU-hours', gpuHours(c.total.gpu_hours)],
        ['Idle GPU-hours', gpuHours(c.total.idle_gpu_hours)],
        ['Unallocated GPU-hours', gpuHours(c.total.unallocated_gpu_hours)],
      ]);
      expect(await headers(page)).to.deep.equal(['Team', 'GPU-hours', 'Idle GPU-hours', 'Energy']);
      expect(await shown(page)).to.deep.equal(expectedTable(c));
      expect((await download(page)).name).to.equal(`chargeback-globex-${CURRENT_MONTH}.csv`);
      expect(await accessibilityViolations(page)).to.deep.equal([]);
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it("tells a MEMBER that the chargeback is for ORG_ADMIN only, with the API's error", async () => {
    await withWatchedPage(running.browser, async (watched) => {
      const { page } = watched;
      await signIn(page, caller('ACME_MEMBER'));
      const answer = await openChargeback(page);
      const why = "The chargeback (every team's GPU time and cost in a month) is shown to organization admins (ORG_ADMIN) only: it bills every team.";
      expect(await page.locator('main .notice').innerText()).to.include(why);
      expect(await page.locator('main .error').innerText()).to.include(`${answer.error.code} (HTTP 403): ${answer.error.message}`);
      expect(await page.locator('main table').count(), 'no statement').to.equal(0);
      expect(await page.getByRole('button', { name: 'Download CSV' }).count()).to.equal(0);
      expect(await accessibilityViolations(page)).to.deep.equal([]);
      // Chromium logs each refused request as a console error too.
      expect(watched.problems.filter((p) => !p.includes('403'))).to.deep.equal([]);
    }, undefined, [403]);
  });

  it('shows what the statistics cost, per group, and the budgets\' cost on the overview, for an organization with prices only', async () => {
    for (const variable of ['ACME_ADMIN', 'GLOBEX_ADMIN']) {
      await withWatchedPage(running.browser, async (watched) => {
        const { page } = watched;
        const statsAnswer = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/workloads/stats');
        await signIn(page, caller(variable), '/statistics?group_by=initiative_id&interval=none');
        const stats = ((await (await statsAnswer).json()) as JsonBody).data;
        const statsTiles = await tilesOf(page);
        const groupHeaders = await page.locator('table.groups thead th').allInnerTexts();
        if (variable === 'GLOBEX_ADMIN') {
          expect(stats).to.not.have.property('currency');
          expect(statsTiles.map(([label]) => label)).to.not.include('Cost');
          expect(groupHeaders).to.not.include('Cost');
        } else {
          expect(stats.currency).to.equal('USD');
          expect(statsTiles).to.deep.include.members([['Cost', money(stats.summary.total_cost)], ['Idle cost', money(stats.summary.total_idle_cost)]]);
          expect(groupHeaders.slice(-2)).to.deep.equal(['Cost', 'Idle cost']);
          expect(await column(page, 'groups', 8)).to.deep.equal(stats.grouped.map((g: JsonBody) => money(g.cost)));
          expect(await column(page, 'groups', 9)).to.deep.equal(stats.grouped.map((g: JsonBody) => money(g.idle_cost)));
        }

        const capacityAnswer = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/capacity');
        await signIn(page, caller(variable));
        const capacity = ((await (await capacityAnswer).json()) as JsonBody).data;
        const budgetTiles = await tilesOf(page, 'budgets-title');
        const teamCosts = await page.$$eval('ul[aria-label="Teams"] .budget-cost', (spans) => spans.map((s) => s.textContent ?? ''));
        if (variable === 'GLOBEX_ADMIN') {
          expect(budgetTiles.map(([label]) => label)).to.not.include('Cost this period');
          expect(teamCosts).to.deep.equal([]);
        } else {
          const s = capacity.summary;
          expect(budgetTiles).to.deep.include.members([['Cost this period', money(s.total_used_cost)], ['Cost burn rate', `${money(s.burn_rate_cost_per_day)}/day`]]);
          expect(teamCosts).to.deep.equal(capacity.initiatives.map((i: JsonBody) => `${money(i.used_cost)} spent`));
          expect((await tilesOf(page, 'month-title')).map(([label]) => label)).to.include('Cost');
        }
        expect(watched.problems).to.deep.equal([]);
      });
    }
  });

  it('at 390 × 844 the Chargeback page never scrolls sideways, and axe finds nothing', async () => {
    await withWatchedPage(running.browser, async (watched) => {
      await signIn(watched.page, caller('ACME_ADMIN'));
      await openChargeback(watched.page);
      await expectFitsWithoutViolations(watched.page);
      expect(watched.problems).to.deep.equal([]);
    }, PHONE);
  });
});
