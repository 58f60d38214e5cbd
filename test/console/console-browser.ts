// Helpers of the console's browser tests: a page that records every console error, page error and
// failed request, and axe-core's WCAG 2 A/AA rules run on it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface WatchedPage {
  page: Page;
  /** Console errors and warnings, uncaught errors, failed requests and HTTP errors, in order. */
  problems: string[];
  close(): Promise<void>;
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

/** The text of one column of the table with class `tableClass`, row by row. */
export async function column(page: Page, tableClass: string, index: number): Promise<string[]> {
  return page.$$eval(`table.${tableClass} tbody tr`, (rows, i) => rows.map((row) => row.children[i]?.textContent?.trim() ?? ''), index);
}

/** The workload ids the rows of the workloads table link to. */
export async function linkedIds(page: Page, tableClass: string): Promise<string[]> {
  const hrefs = await page.$$eval(`table.${tableClass} tbody a`, (links) => links.map((a) => a.getAttribute('href') ?? ''));
  return hrefs.map((href) => decodeURIComponent(href.split('/').pop() ?? ''));
}
