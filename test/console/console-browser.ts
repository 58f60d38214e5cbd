// Helpers of the console's browser tests: the demo's world and Chromium for a suite, a page that
// records every console error, page error and failed request, axe-core's WCAG 2 A/AA rules run on it,
// and what the page was answered and shows.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import type { Browser, Locator, Page } from 'playwright-core';
import { CHROMIUM_INSTALL_HINT, chromiumPath, consoleSettled, launchChromium, settledAfter } from '../../scripts/console/chromium.js';
import { startDemo, type DemoCallerToken, type RunningDemo } from '../../sim/demo/run-demo.js';
import type { JsonBody } from '../support/service-harness.js';
import { makeTempDir } from '../support/temp-dir.js';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface WatchedPage {
  page: Page;
  /** Console errors and warnings, uncaught errors, failed requests and HTTP errors, in order. */
  problems: string[];
  close(): Promise<void>;
}

export interface DemoInChromium {
  demo: RunningDemo;
  browser: Browser;
}

/**
 * The demo's world (startDemo, as `npm run demo` runs it) and Chromium, for the suite this is called
 * in: started before its tests, stopped after them. Without Chromium the suite is skipped, but in CI,
 * which must run it.
 */
export function useDemoInChromium(dirPrefix: string): DemoInChromium {
  const running = {} as DemoInChromium;
  const dir = makeTempDir(dirPrefix);
  before(async function () {
    const path = chromiumPath();
    if (path === undefined) {
      if (process.env.CI) throw new Error(`The browser tests need Chromium, and CI must run them: ${CHROMIUM_INSTALL_HINT}`);
      console.log(`      skipped: these tests need Chromium (${CHROMIUM_INSTALL_HINT})`);
      this.skip();
    }
    running.demo = await startDemo({ dir: dir.path, listen: '127.0.0.1:0', adminListen: '127.0.0.1:0', logLevel: 'error' });
    running.browser = await launchChromium(path);
  });
  after(async () => {
    await running.browser?.close();
    await running.demo?.stop();
    dir.remove();
  });
  return running;
}

/** The API's JSON answer to `who` for a /v1 path, which must be a 200. */
export async function apiAs(demo: RunningDemo, who: DemoCallerToken, path: string): Promise<JsonBody> {
  const headers = { Authorization: `Bearer ${who.token}`, 'X-Organization-Id': who.org };
  const response = await fetch(`${demo.url}/v1${path}`, { headers });
  expect(response.status, path).to.equal(200);
  return response.json();
}

/** Opens the console's sign-in link of `who`, on `path`, and waits for the page to be settled. */
export async function signInAs(demo: RunningDemo, page: Page, who: DemoCallerToken, path = '/'): Promise<void> {
  await page.goto(demo.signInLink(who).replace(`${demo.url}/`, `${demo.url}${path}`));
  await consoleSettled(page);
}

/** Does `action` and gives the JSON the page was answered on each of `paths` (pathnames under /v1). */
export async function answersTo(page: Page, paths: readonly string[], action: () => Promise<unknown>): Promise<JsonBody[]> {
  const answered = paths.map((path) => page.waitForResponse((response) => new URL(response.url()).pathname === `/v1${path}`));
  await settledAfter(page, action);
  return Promise.all(answered.map(async (response) => (await response).json() as Promise<JsonBody>));
}

/** The tiles of the section titled by the element `titleId`, as [label, value]; of the whole page without one. */
export function tilesOf(page: Page, titleId?: string): Promise<[string, string][]> {
  const scope = titleId === undefined ? 'main' : `section[aria-labelledby="${titleId}"]`;
  return page.$$eval(`${scope} .tile`, (tiles) =>
    tiles.map((t) => [t.querySelector('dt')?.textContent ?? '', t.querySelector('dd')?.textContent ?? ''] as [string, string]));
}

/** The text of every cell of these rows (`tr`s), row by row. */
export function cells(rows: Locator): Promise<string[][]> {
  return rows.evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => cell.textContent ?? '')));
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Runs `use` on a new watched page, closing its context whatever happens. */
export async function withWatchedPage(browser: Browser, use: (watched: WatchedPage) => Promise<void>, viewport = DESKTOP, allowStatus: readonly number[] = []): Promise<void> {
  const watched = await watchedPage(browser, viewport, allowStatus);
  try {
    await use(watched);
  } finally {
    await watched.close();
  }
}

/**
 * A new browser context (its own sessionStorage) and page. `allowStatus`: HTTP error statuses the
 * test expects (a refused token's 401), which are then not problems.
 */
export async function watchedPage(browser: Browser, viewport = DESKTOP, allowStatus: readonly number[] = []): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport, ...(viewport === PHONE ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A page left while its requests run aborts them (the console aborts them itself): not a failure.
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !allowStatus.includes(response.status())) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  return { page, problems, close: () => context.close() };
}

/** Runs an expression in the page (browser-side code is text: the tests compile without the DOM's types); its value. */
export function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's WCAG 2.0/2.1 A and AA rules on the current page: the violations, as `rule: targets`. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export async function accessibilityViolations(page: Page): Promise<string[]> {
  // evaluate() runs through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axeSource);
  const violations = await inPage<AxeViolation[]>(page, `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } }).then((result) => result.violations)`);
  return violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The page never scrolls sideways at its viewport's width, and axe finds nothing on it. */
export async function expectFitsWithoutViolations(page: Page): Promise<void> {
  const widths = await inPage<number[]>(page, '[document.documentElement.scrollWidth, window.innerWidth]');
  expect(widths[0], `the page is ${widths[0]} px wide`).to.be.at.most(widths[1] ?? 0);
  expect(await accessibilityViolations(page)).to.deep.equal([]);
}

/** The text of one column of the table with class `tableClass`, row by row. */
export async function column(page: Page, tableClass: string, index: number): Promise<string[]> {
  return page.$$eval(`table.${tableClass} tbody tr`, (rows, i) => rows.map((row) => row.children[i]?.textContent?.trim() ?? ''), index);
}

/** The workload ids the rows of the workloads table link to. */
export async function linkedIds(page: Page, tableClass: string): Promise<string[]> {
  const hrefs = await page.$$eval(`table.${tableClass} tbody a`, (links) => links.map((a) => a.getAttribute('href') ?? ''));
  return hrefs.map((href) => decodeURIComponent(href.split('/').pop() ?? ''));
}
