// Debian's Chromium (package `chromium`), driven by playwright-core for the console's browser tests
// and screenshots. $CHROMIUM_BIN, else /usr/bin/chromium. The flags keep it off the network it cannot
// reach here (component updates, sync, background lookups) and let it run as root without a sandbox.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
