// The web console in a real browser (Debian's Chromium, driven by playwright-core) against the real
// service on the demo's simulated world, for each role of the demo: every page loads with no console
// error and no failed request, each caller sees only what the API gives its token, filters change the
// URL and the rows, paging walks every row once, a refused token shows the API's error, a workload
// shows its cost at acme's prices and none at globex's (it has none), and the pages pass axe-core's
// WCAG 2 A/AA rules at desktop and phone sizes. No churn runs, so the workloads hold
// still; their GPU metrics and running GPU-hours move, so a ranking is checked against the page's own answer.
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { consoleSettled, settledAfter } from '../../scripts/console/chromium.js';
import type { DemoCallerToken } from '../../sim/demo/run-demo.js';
import { PRICES_CONFIGMAP, PRICES_CURRENCY } from '../../sim/demo/prices.js';
import { CAPACITY_NAMESPACE } from '../../sim/demo/world.js';
import { aGpuJob } from '../../sim/kube-api/objects.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import type { JsonBody } from '../support/service-harness.js';
import { waitFor } from '../support/wait-for.js';
import { accessibilityViolations, apiAs, column, DESKTOP, inPage, linkedIds, PHONE, signInAs, useDemoInChromium, withWatchedPage } from './console-browser.js';

const PAGES = ['/', '/workloads', '/rankings', '/statistics', '/statistics?group_by=initiative_id&interval=week', '/rankings?sort_by=gpu_hours'];
const ROLE_TEAMS: Record<string, readonly string[] | undefined> = { ACME_ADMIN: undefined, ACME_LEAD: ['llm', 'vision'], ACME_MEMBER: ['vision'], GLOBEX_ADMIN: undefined };

describe('web console in Chromium', function () {
  this.timeout(180_000);
  const running = useDemoInChromium('gpucap-console-demo-');

  const caller = (variable: string): DemoCallerToken => running.demo.caller(variable);
  const api = (who: DemoCallerToken, path: string): Promise<JsonBody> => apiAs(running.demo, who, path);
  /** Every workload id the API lists for a query, page by page. */
  const allIds = async (who: DemoCallerToken, query: string): Promise<string[]> => {
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const body = await api(who, `/workloads?${query}&limit=100${token === undefined ? '' : `&next_token=${token}`}`);
      ids.push(...body.data.workloads.map((w: JsonBody) => w.workload_id as string));
      token = body.metadata.next_token;
    } while (token !== undefined);
    return ids;
  };
  /**
   * Does `action`, waits for the view it leads to, and gives the API's answer to the page's own
   * ranking request by `sortBy`. The world is live (GPU metrics scraped every 5 s, running workloads'
   * GPU-hours growing), so the page is compared with what it was answered, not with a later request.
   */
  const rankingAnswered = async (page: Page, sortBy: string, action: () => Promise<unknown>): Promise<JsonBody> => {
    const answered = page.waitForResponse((response) => {
      const url = new URL(response.url());
      return url.pathname === '/v1/workloads/metrics' && url.searchParams.get('sort_by') === sortBy;
    });
    await settledAfter(page, action);
    const response = await answered;
    expect(response.status(), `the page's ranking by ${sortBy}`).to.equal(200);
    return ((await response.json()) as JsonBody).data;
  };
  const signIn = (page: Page, who: DemoCallerToken, path = '/') => signInAs(running.demo, page, who, path);

  for (const variable of Object.keys(ROLE_TEAMS)) {
    describe(`as ${variable}`, () => {
      it('loads every page with no console error, no failed request and no accessibility violation', async () => {
        const who = caller(variable);
        await withWatchedPage(running.browser, async (watched) => {
        await signIn(watched.page, who);
        // The token left the address bar, and lives in this tab's sessionStorage only.
        expect(watched.page.url()).to.equal(`${running.demo.url}/`);
        expect(await inPage(watched.page, '[sessionStorage.length, localStorage.length, document.cookie]')).to.deep.equal([1, 0, '']);
        for (const path of PAGES) {
          await watched.page.goto(running.demo.url + path);
          await consoleSettled(watched.page);
          expect(await watched.page.locator('.error').count(), `${path}: ${await watched.page.locator('main').innerText()}`).to.equal(0);
          expect(await accessibilityViolations(watched.page), path).to.deep.equal([]);
        }
        const first = (await api(who, '/workloads?limit=1')).data.workloads[0];
        await watched.page.goto(`${running.demo.url}/workloads/${first.workload_id}`);
        await consoleSettled(watched.page);
        expect(await watched.page.locator('h1').innerText()).to.equal(`Workload ${first.name}`);
        expect(await watched.page.locator('figure.metric').count()).to.equal(5);
        expect(await accessibilityViolations(watched.page), 'workload').to.deep.equal([]);
        expect(watched.problems).to.deep.equal([]);
        });
      });

      it("shows only the caller's teams, as the API scopes them", async () => {
        const who = caller(variable);
        const teams = ROLE_TEAMS[variable];
        const capacity = (await api(who, '/capacity')).data;
        await withWatchedPage(running.browser, async (watched) => {
        await signIn(watched.page, who);
        const budgetNames = await watched.page.$$eval('ul[aria-label="Teams"] .budget-name', (names) => names.map((n) => n.textContent ?? ''));
        expect(budgetNames).to.have.length(capacity.initiatives.length);
        for (const initiative of capacity.initiatives) expect(budgetNames.join('\n')).to.include(initiative.initiative_id);
        await watched.page.goto(`${running.demo.url}/workloads?limit=100`);
        await consoleSettled(watched.page);
        const rowTeams = new Set(await column(watched.page, 'workloads', 2));
        await watched.page.goto(`${running.demo.url}/statistics?group_by=initiative_id&interval=none`);
        await consoleSettled(watched.page);
        const statTeams = new Set(await column(watched.page, 'groups', 0));
        if (teams !== undefined) {
          expect([...rowTeams].every((t) => teams.includes(t)), [...rowTeams].join()).to.equal(true);
          expect([...statTeams].every((t) => teams.includes(t)), [...statTeams].join()).to.equal(true);
          expect(capacity.initiatives.map((i: JsonBody) => i.initiative_id).sort()).to.deep.equal([...teams].sort());
        } else {
          expect(rowTeams.size).to.be.greaterThan(1);
        }
        expect(watched.problems).to.deep.equal([]);
        });
      });

      it('walks every workload exactly once with Next page', async () => {
        const who = caller(variable);
        // A fixed end keeps Jobs submitted during the walk out of it.
        const end = new Date(Date.now() - 1000).toISOString().replace(/\.\d+Z$/, 'Z');
        const expected = await allIds(who, `end_date=${end}`);
        await withWatchedPage(running.browser, async (watched) => {
        await signIn(watched.page, who, `/workloads?end_date=${end}&limit=20`);
        const seen: string[] = [];
        for (let pages = 0; pages < 100; pages += 1) {
          seen.push(...(await linkedIds(watched.page, 'workloads')));
          const next = watched.page.getByRole('link', { name: 'Next page' });
          if ((await next.count()) === 0) break;
          await settledAfter(watched.page, () => next.click());
          expect(watched.page.url()).to.include('next_token=');
        }
        expect(seen).to.have.length(expected.length);
        expect(new Set(seen).size).to.equal(seen.length);
        expect(seen).to.deep.equal(expected);
        expect(watched.problems).to.deep.equal([]);
        });
      });
    });
  }

  it('filters change the URL and the rows, and the URL restores them', async () => {
    const who = caller('ACME_ADMIN');
    await withWatchedPage(running.browser, async (watched) => {
    await signIn(watched.page, who, '/workloads');
    await watched.page.getByLabel('Status').selectOption('failed');
    await watched.page.getByLabel('Team (initiative)').fill('llm');
    await settledAfter(watched.page, () => watched.page.getByRole('button', { name: 'Apply' }).click());
    const url = new URL(watched.page.url());
    expect(url.pathname).to.equal('/workloads');
    expect(Object.fromEntries(url.searchParams)).to.deep.equal({ status: 'failed', initiative_id: 'llm' });
    const expected = await allIds(who, 'status=failed&initiative_id=llm');
    expect(expected.length).to.be.greaterThan(0);
    expect(await linkedIds(watched.page, 'workloads')).to.deep.equal(expected.slice(0, 20));
    expect(new Set(await column(watched.page, 'workloads', 1))).to.deep.equal(new Set(['failed']));
    // The shared URL opens the same view in a new tab.
    await withWatchedPage(running.browser, async (other) => {
    await signIn(other.page, who, `${url.pathname}${url.search}`);
    expect(await other.page.getByLabel('Status').inputValue()).to.equal('failed');
    expect(await linkedIds(other.page, 'workloads')).to.deep.equal(expected.slice(0, 20));
    });
    // Back returns to the unfiltered list.
    await settledAfter(watched.page, () => watched.page.goBack());
    expect(new URL(watched.page.url()).search).to.equal('');
    expect(await watched.page.getByLabel('Status').inputValue()).to.equal('');
    expect(watched.problems).to.deep.equal([]);
    });
  });

  it('ranks by each sort key, with the scope average', async () => {
    const who = caller('ACME_ADMIN');
    await withWatchedPage(running.browser, async (watched) => {
    await signIn(watched.page, who, '/rankings');
    for (const key of ['gpu_utilization', 'memory_utilization', 'power_usage', 'gpu_hours', 'idle_gpu_hours', 'gpu_efficiency', 'queue_seconds']) {
      const answer = await rankingAnswered(watched.page, key, () => watched.page.locator(`nav.tabs a[href*="sort_by=${key}"]`).click());
      expect(new URL(watched.page.url()).searchParams.get('sort_by')).to.equal(key);
      expect(await watched.page.locator('.error').allInnerTexts(), `${key}: the error shown`).to.deep.equal([]);
      // Usage figures (idle GPU-hours, efficiency) come with the first lifetime flush, 10 s into the demo.
      if (!['idle_gpu_hours', 'gpu_efficiency'].includes(key)) expect(answer.workloads, `${key}: the API ranked nothing`).to.not.be.empty;
      expect(await linkedIds(watched.page, 'ranking'), key).to.deep.equal(answer.workloads.map((w: JsonBody) => w.workload_id));
      expect(await watched.page.locator('.tile dt').first().innerText()).to.match(/^Scope average of /);
    }
    expect(watched.problems).to.deep.equal([]);
    });
  });

  it('waits for the view an action leads to, even one drawn after the action has returned', async () => {
    const who = caller('ACME_ADMIN');
    await withWatchedPage(running.browser, async (watched) => {
    await signIn(watched.page, who, '/rankings');
    // The click comes 300 ms after the action returns, while the old view is settled: a wait on the
    // settled state alone would return at once and read the old ranking.
    const late = "setTimeout(() => document.querySelector('nav.tabs a[href*=\"sort_by=gpu_hours\"]').click(), 300)";
    const answer = await rankingAnswered(watched.page, 'gpu_hours', () => inPage(watched.page, late));
    expect(new URL(watched.page.url()).searchParams.get('sort_by')).to.equal('gpu_hours');
    expect(answer.workloads).to.not.be.empty;
    expect(await linkedIds(watched.page, 'ranking')).to.deep.equal(answer.workloads.map((w: JsonBody) => w.workload_id));
    expect(watched.problems).to.deep.equal([]);
    });
  });

  it("a refused token shows the API's error, and Sign in again leads to a working sign-in", async () => {
    const who = caller('ACME_ADMIN');
    await withWatchedPage(running.browser, async (watched) => {
    await watched.page.goto(`${running.demo.url}/#token=not-a-token&org=acme`);
    await consoleSettled(watched.page);
    const refused = await fetch(`${running.demo.url}/v1/capacity`, { headers: { Authorization: 'Bearer not-a-token', 'X-Organization-Id': 'acme' } });
    const error = ((await refused.json()) as JsonBody).error;
    const shown = await watched.page.locator('.error').first().innerText();
    expect(shown).to.include(`${error.code} (HTTP 401): ${error.message}`);
    expect(shown).to.include('request_id ');
    await settledAfter(watched.page, () => watched.page.getByRole('button', { name: 'Sign in again' }).first().click());
    await watched.page.getByLabel('Bearer token').fill(who.token);
    await watched.page.getByLabel('Organization ID (X-Organization-Id)').fill('acme');
    await settledAfter(watched.page, () => watched.page.getByRole('button', { name: 'Sign in' }).click());
    expect(await watched.page.locator('h1').innerText()).to.equal('Overview of acme');
    expect(await watched.page.locator('.error').count()).to.equal(0);
    // Sign out forgets the token.
    await settledAfter(watched.page, () => watched.page.getByRole('button', { name: 'Sign out' }).click());
    expect(await inPage(watched.page, 'sessionStorage.length')).to.equal(0);
    expect(await watched.page.getByLabel('Bearer token').isVisible()).to.equal(true);
    expect(watched.problems.filter((p) => !p.includes('401'))).to.deep.equal([]);
    }, DESKTOP, [401]);
  });

  it('a sign-in link pasted into a tab that already shows the console signs in, without a reload', async () => {
    await withWatchedPage(running.browser, async (watched) => {
    await watched.page.goto(`${running.demo.url}/`);
    await consoleSettled(watched.page);
    expect(await watched.page.getByLabel('Bearer token').isVisible()).to.equal(true);
    await inPage(watched.page, 'window.__sameDocument = true');
    await settledAfter(watched.page, () => watched.page.goto(running.demo.signInLink(caller('ACME_ADMIN'))));
    expect(await inPage(watched.page, 'window.__sameDocument === true'), 'the page was not loaded again').to.equal(true);
    expect(await watched.page.locator('h1').innerText()).to.equal('Overview of acme');
    expect(watched.page.url()).to.equal(`${running.demo.url}/`);
    // Another organization's link, pasted over a signed-in tab, switches to it.
    await settledAfter(watched.page, () => watched.page.goto(running.demo.signInLink(caller('GLOBEX_ADMIN'))));
    expect(await watched.page.locator('h1').innerText()).to.equal('Overview of globex');
    expect(watched.problems).to.deep.equal([]);
    });
  });

  it('works at 390×844: no sideways scrolling of the page, and no accessibility violation', async () => {
    await withWatchedPage(running.browser, async (watched) => {
    await signIn(watched.page, caller('ACME_ADMIN'));
    for (const path of PAGES) {
      await watched.page.goto(running.demo.url + path);
      await consoleSettled(watched.page);
      const widths = await inPage<number[]>(watched.page, '[document.documentElement.scrollWidth, window.innerWidth]');
      expect(widths[0], `${path} is ${widths[0]} px wide`).to.be.at.most(widths[1] ?? 0);
      expect(await accessibilityViolations(watched.page), path).to.deep.equal([]);
    }
    expect(watched.problems).to.deep.equal([]);
    }, PHONE);
  });

  it('the accessibility check finds what it looks for: grey-on-white text and an unlabelled field', async () => {
    await withWatchedPage(running.browser, async (watched) => {
    await signIn(watched.page, caller('ACME_ADMIN'), '/rankings');
    await inPage(watched.page, "(() => { const p = document.createElement('p'); p.textContent = 'faint'; p.style.color = '#bbbbbb'; document.querySelector('main').append(p, document.createElement('input')); })()");
    const violations = await accessibilityViolations(watched.page);
    expect(violations.map((v) => v.split(' ')[0])).to.include.members(['color-contrast', 'label']);
    });
  });

  it("shows a shared workload's share of a GPU and how it was counted", async () => {
    const admin = caller('ACME_ADMIN');
    const listed = (await api(admin, '/workloads?status=running&limit=100')).data.workloads as JsonBody[];
    const mig = listed.find((w) => w.name === 'eval-mig-notebook');
    expect(mig, 'the demo\'s MIG Job').to.not.equal(undefined);
    await withWatchedPage(running.browser, async (watched) => {
      await signIn(watched.page, admin, `/workloads/${mig?.workload_id as string}`);
      const value = (label: string) => watched.page.locator('dl.record div').filter({ has: watched.page.locator('dt', { hasText: label }) }).locator('dd').innerText();
      expect(await value('GPUs allocated')).to.equal('0.1429 (MIG slices)');
      expect(await value('GPU model')).to.equal('NVIDIA-H100-80GB-HBM3');
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it("shows a workload's cost at its organization's prices, unpriced where no rate matched, and nothing without prices", async () => {
    const admin = caller('ACME_ADMIN');
    const store = running.demo.world.home.api.store;
    const pricesKey = { namespace: CAPACITY_NAMESPACE, name: PRICES_CONFIGMAP };
    const prices = store.get('configmaps', pricesKey) as KubeObject;
    const pricesText = (prices.data as Record<string, string>)['prices.yaml'] ?? '';
    const record = async (who: DemoCallerToken, id: string): Promise<JsonBody> => (await api(who, `/workloads/${id}`)).data;
    // A finished workload: its cost no longer grows while the page and the test read it.
    let l40s: JsonBody | undefined;
    for (const listed of (await api(admin, '/workloads?status=completed&limit=100')).data.workloads as JsonBody[]) {
      const full = await record(admin, listed.workload_id as string);
      if (full.gpu_model === 'NVIDIA-L40S' && full.gpu_hours_used > 0) {
        l40s = full;
        break;
      }
    }
    expect(l40s, "a finished L40S workload of acme's").to.not.equal(undefined);
    const id = l40s?.workload_id as string;
    expect(l40s).to.include({ currency: PRICES_CURRENCY, unpriced_gpu_hours: 0 });
    expect(l40s?.cost).to.be.above(0);
    const money = (value: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: PRICES_CURRENCY }).format(value);
    /** The record's rows on the page, label to value. */
    const shownRecord = async (page: Page): Promise<Record<string, string>> =>
      Object.fromEntries(await page.$$eval('dl.record div', (rows) => rows.map((row) => [row.querySelector('dt')?.textContent ?? '', row.querySelector('dd')?.textContent ?? ''])));
    try {
      await withWatchedPage(running.browser, async (watched) => {
        await signIn(watched.page, admin, `/workloads/${id}`);
        const shown = await shownRecord(watched.page);
        expect(shown).to.include({ Cost: money(l40s?.cost), 'Energy cost': l40s?.energy_cost === null ? '—' : money(l40s?.energy_cost) });
        expect(shown, 'every GPU-hour of it was priced').to.not.have.property('Unpriced GPU-hours');
        expect(await accessibilityViolations(watched.page)).to.deep.equal([]);
        // Without a rate for its GPU model, its GPU time is unpriced: the page says so rather than showing a figure.
        store.update('configmaps', { ...prices, data: { 'prices.yaml': pricesText.split('\n').filter((line) => !line.includes('NVIDIA-L40S,')).join('\n') } });
        const unpriced = await waitFor(async () => {
          const w = await record(admin, id);
          return w.cost === null ? w : undefined;
        }, { timeoutMs: 20_000, what: 'the L40S workload to be unpriced once its rates are gone' });
        await watched.page.reload();
        await consoleSettled(watched.page);
        expect(await shownRecord(watched.page)).to.include({
          Cost: 'unpriced',
          'Unpriced GPU-hours': `${new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(unpriced.unpriced_gpu_hours)} GPU-h`,
        });
        expect(watched.problems).to.deep.equal([]);
      });
    } finally {
      store.update('configmaps', { ...(store.get('configmaps', pricesKey) as KubeObject), data: { 'prices.yaml': pricesText } });
      await waitFor(async () => ((await record(admin, id)).cost === null ? undefined : true), { timeoutMs: 20_000, what: "acme's prices back in force" });
    }
    // globex has no prices: its records carry no cost key, and its workload page no cost row.
    const globex = caller('GLOBEX_ADMIN');
    const theirs = await record(globex, (await api(globex, '/workloads?status=completed&limit=1')).data.workloads[0].workload_id as string);
    expect(theirs).to.not.have.any.keys('currency', 'cost', 'energy_cost', 'unpriced_gpu_hours');
    await withWatchedPage(running.browser, async (watched) => {
      await signIn(watched.page, globex, `/workloads/${theirs.workload_id as string}`);
      const shown = await shownRecord(watched.page);
      expect(shown).to.have.property('GPU-hours used');
      expect(shown).to.not.have.any.keys('Cost', 'Energy cost', 'Unpriced GPU-hours');
      expect(watched.problems).to.deep.equal([]);
    });
  });

  it('shows a hostile workload name and team name as text on every page: no dialog, no injected element', async () => {
    const name = '<img src=x onerror=alert(1)>';
    const team = '"><script>alert(1)</script>';
    const store = running.demo.world.home.api.store;
    const budgetKey = { namespace: CAPACITY_NAMESPACE, name: 'capacity-acme' };
    const budget = store.get('configmaps', budgetKey);
    const budgetText = (budget?.data as Record<string, string> | undefined)?.['capacity.yaml'] ?? '';
    expect(budgetText).to.include('name: Computer Vision');
    // A pending Job of its own team, and the budget's vision team under that name: the API takes both as they are.
    const job = aGpuJob('vision', name, 1);
    store.create('jobs', { ...job, metadata: { ...job.metadata, labels: { 'gpucap.io/submitted-by': 'dave', 'gpucap.io/initiative': team } } });
    store.update('configmaps', { ...(budget as KubeObject), data: { 'capacity.yaml': budgetText.replace('name: Computer Vision', `name: ${JSON.stringify(team)}`) } });
    try {
      const admin = caller('ACME_ADMIN');
      const teamQuery = `initiative_id=${encodeURIComponent(team)}`;
      const listed = await waitFor(async () => {
        const [workloads, capacity] = [(await api(admin, `/workloads?${teamQuery}`)).data.workloads as JsonBody[], (await api(admin, '/capacity')).data];
        return workloads.length === 1 && capacity.initiatives.some((i: JsonBody) => i.name === team) && workloads[0];
      }, { timeoutMs: 20_000, what: 'the API to show the hostile Job and team name' });
      expect(listed.name).to.equal(name);
      const pages: [string, string[]][] = [
        ['/', [team]],
        [`/workloads?${teamQuery}`, [name, team]],
        [`/workloads/${encodeURIComponent(listed.workload_id as string)}`, [`Workload ${name}`, team]],
        [`/rankings?sort_by=queue_seconds&${teamQuery}`, [name, team]],
        ['/statistics?group_by=initiative_id&interval=none', [team]],
      ];
      await withWatchedPage(running.browser, async (watched) => {
        const dialogs: string[] = [];
        watched.page.on('dialog', (dialog) => {
          dialogs.push(dialog.message());
          void dialog.dismiss();
        });
        await signIn(watched.page, admin);
        for (const [path, texts] of pages) {
          await watched.page.goto(running.demo.url + path);
          await consoleSettled(watched.page);
          const shown = await watched.page.locator('main').innerText();
          for (const text of texts) expect(shown, `${path} shows ${text}`).to.include(text);
          if (texts[0]?.startsWith('Workload ')) expect(await watched.page.title()).to.equal(`Workload ${name} · gpu-capacity-api`);
          // Nothing of either string became markup: no image, no handler attribute, no script but the console's own.
          const injected = await inPage<string[]>(watched.page, `[...document.querySelectorAll('*')].filter((e) =>
            e.tagName === 'IMG' || (e.tagName === 'SCRIPT' && !(e.getAttribute('src') ?? '').startsWith('/ui/')) ||
            [...e.attributes].some((a) => a.name.startsWith('on'))).map((e) => e.outerHTML)`);
          expect(injected, path).to.deep.equal([]);
        }
        expect(dialogs).to.deep.equal([]);
        expect(watched.problems).to.deep.equal([]);
      });
    } finally {
      store.delete('jobs', { namespace: 'vision', name });
      store.update('configmaps', { ...(store.get('configmaps', budgetKey) as KubeObject), data: { 'capacity.yaml': budgetText } });
    }
  });

  it('can be used with the keyboard alone: skip link, then Tab to a workload and Enter', async () => {
    await withWatchedPage(running.browser, async (watched) => {
    await signIn(watched.page, caller('ACME_ADMIN'), '/workloads');
    await watched.page.keyboard.press('Tab');
    expect(await inPage(watched.page, 'document.activeElement?.textContent')).to.equal('Skip to content');
    await watched.page.keyboard.press('Enter');
    expect(await inPage(watched.page, 'document.activeElement?.id')).to.equal('main');
    let onLink = false;
    for (let presses = 0; presses < 40 && !onLink; presses += 1) {
      await watched.page.keyboard.press('Tab');
      onLink = await inPage<boolean>(watched.page, "document.activeElement?.tagName === 'A' && document.activeElement.closest('table.workloads') !== null");
    }
    expect(onLink, 'Tab reaches the first workload link').to.equal(true);
    await settledAfter(watched.page, () => watched.page.keyboard.press('Enter'));
    expect(new URL(watched.page.url()).pathname).to.match(/^\/workloads\/.+/);
    // After a navigation, the focus is on the new page's title.
    expect(await inPage(watched.page, 'document.activeElement?.tagName')).to.equal('H1');
    expect(watched.problems).to.deep.equal([]);
    });
  });
});
