// Debian's Chromium (package `chromium`), driven by playwright-core for the console's browser tests
// and screenshots, and the wait both use for a console page to be done. $CHROMIUM_BIN, else /usr/bin/chromium. The flags keep it off the network it cannot
// reach here (component updates, sync, background lookups) and let it run as root without a sandbox.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_INSTALL_HINT = 'apt-get install -y chromium (or export CHROMIUM_BIN=/path/to/chromium)';

export function chromiumPath(): string | undefined {
  const path = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
  return existsSync(path) ? path : undefined;
}

export async function launchChromium(path: string): Promise<Browser> {
  return chromium.launch({
    executablePath: path,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-extensions',
      '--font-render-hinting=none',
    ],
  });
}

type MainElement = object | null;
const mainElement = () => (globalThis as unknown as { document: { getElementById(id: string): MainElement } }).document.getElementById('main');

/**
 * Does what leads the console to another view (a click, a key, Back), then waits for that view to be
 * settled. Each view is drawn into a new <main>, so the wait first sees the old one replaced: the old
 * view is settled too, and waiting on the settled state alone could return before the action's event
 * handler ran.
 */
export async function settledAfter(page: Page, action: () => Promise<unknown>): Promise<void> {
  const before = await page.evaluateHandle(mainElement);
  try {
    await action();
    await page.waitForFunction((old) => {
      // Runs in the page, where mainElement is not defined: the same lookup, spelled again.
      const now = (globalThis as unknown as { document: { getElementById(id: string): MainElement } }).document.getElementById('main');
      return now !== null && now !== old;
    }, before);
  } finally {
    await before.dispose();
  }
  await consoleSettled(page);
}

/** Waits until the console's page has its title and no section is loading any more, nor any request. */
export async function consoleSettled(page: Page): Promise<void> {
  // A function, not text: waitForFunction evaluates text with eval(), which the console's CSP forbids.
  // The DOM's types are not in this project's Node tsconfig, hence the narrow cast.
  await page.waitForFunction(() => {
    const doc = (globalThis as unknown as { document: { querySelector(selector: string): { textContent: string | null } | null } }).document;
    return (doc.querySelector('h1')?.textContent ?? '') !== '' && doc.querySelector('.loading') === null;
  });
  await page.waitForLoadState('networkidle');
}
