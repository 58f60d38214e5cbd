// The built web console (docs/console.md), read into memory once at startup: a handful of small
// files, served from memory with their ETag and a gzip copy made here, so no request touches the disk.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface ConsoleAsset {
  body: Buffer;
  /** Absent where gzip would not make the file smaller (images). */
  gzip?: Buffer;
  contentType: string;
  etag: string;
  /** The name carries a hash of the content (`console-4TQ2JX5A.js`): cacheable for good. */
  immutable: boolean;
}

export interface ConsoleAssets {
  /** index.html, served at every page path. */
  page: ConsoleAsset;
  /** By file name, served at `/ui/<name>`. */
  files: ReadonlyMap<string, ConsoleAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json', '.txt', '.html']);
// esbuild's [hash]: 8 characters of base32.
const HASHED_NAME = /-[A-Z0-9]{8}\.[a-z0-9]+$/;
const PAGE = 'index.html';

export class ConsoleAssetsMissingError extends Error {
  constructor(dir: string, what: string) {
    super(`The web console is not built at ${dir} (${what}): run ` +
      `\`npm run build\`, or set GPUCAP_CONSOLE_ASSETS_DIR to the folder it wrote`);
    this.name = 'ConsoleAssetsMissingError';
  }
}

export function loadConsoleAssets(dir: string): ConsoleAssets {
  if (!existsSync(join(dir, PAGE))) throw new ConsoleAssetsMissingError(dir, `no ${PAGE}`);
  const files = new Map<string, ConsoleAsset>();
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isFile() || entry.name === PAGE) continue;
    const contentType = CONTENT_TYPES[extname(entry.name)];
    // Source maps, licences and anything else the build leaves are not served.
    if (contentType === undefined) continue;
    files.set(entry.name, asset(readFileSync(join(dir, entry.name)), entry.name, contentType));
  }
  return { page: asset(readFileSync(join(dir, PAGE)), PAGE, 'text/html; charset=utf-8'), files };
}

function asset(body: Buffer, name: string, contentType: string): ConsoleAsset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  const gzip = COMPRESSIBLE.has(extname(name)) ? gzipSync(body, { level: 9 }) : undefined;
  return {
    body,
    ...(gzip !== undefined && gzip.length < body.length ? { gzip } : {}),
    contentType,
    etag,
    immutable: HASHED_NAME.test(name),
  };
}
