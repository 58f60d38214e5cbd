// Serves the web console (docs/console.md): its one page at each of its paths, its assets under /ui/.
// The console is static and reads the data from /v1 with the user's own token, so these routes need
// no credentials, and the console can never show more than the API gives that token.
import type { Next } from 'koa';
import { ApiError } from '../../domain/errors.js';
import type { ApiContext } from '../context.js';
import type { ConsoleAsset, ConsoleAssets } from './console-assets.js';

/** The console's pages; each loads the same index.html, which routes in the browser. */
export const CONSOLE_PAGE_PATHS: readonly RegExp[] = [
  /^\/$/, /^\/workloads$/, /^\/workloads\/[^/]+$/, /^\/rankings$/, /^\/statistics$/, /^\/fleet$/, /^\/chargeback$/,
];
const ASSET_PREFIX = '/ui/';
/** The route names of its answers (ctx.state.route): the same for everyone, cached by their own rules. */
export const CONSOLE_ROUTES = { page: '/', asset: '/ui/*' } as const;

// No inline script or style, nothing from another origin, never framed. `img-src data:` is for the
// icons the stylesheet embeds; the data comes from this origin's /v1 (connect-src 'self').
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  // The token travels in the Authorization header only; no URL the console opens carries it anyway.
  'Referrer-Policy': 'no-referrer',
  // For browsers older than frame-ancestors.
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Koa middleware in front of the API's router. `{ missing }`: the console is enabled but not built,
 * and its paths say so in the API's error body.
 */
export function serveConsole(assets: ConsoleAssets | { missing: string }) {
  return async function consoleMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const isPage = CONSOLE_PAGE_PATHS.some((path) => path.test(ctx.path));
    const assetName = ctx.path.startsWith(ASSET_PREFIX) ? ctx.path.slice(ASSET_PREFIX.length) : undefined;
    if (!isPage && assetName === undefined) return next();
    ctx.state.route = isPage ? CONSOLE_ROUTES.page : CONSOLE_ROUTES.asset;
    if ('missing' in assets) throw new ApiError('NOT_FOUND', assets.missing);
    const asset = isPage ? assets.page : assets.files.get(assetName ?? '');
    if (asset === undefined) throw new ApiError('NOT_FOUND', `The console has no file ${ctx.path}`);
    send(ctx, asset);
  };
}

function send(ctx: ApiContext, asset: ConsoleAsset): void {
  ctx.set(SECURITY_HEADERS);
  // The page is always revalidated (it names the current hashed assets); hashed assets never change.
  ctx.set('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  ctx.vary('Accept-Encoding');
  ctx.type = asset.contentType;
  const gzip = asset.gzip !== undefined && ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  // Each encoding is its own representation, with its own strong ETag.
  ctx.etag = gzip ? `${asset.etag.slice(0, -1)}-gzip"` : asset.etag;
  // Koa calls a response fresh only with a 2xx status; until a body is set it is 404.
  ctx.status = 200;
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  if (gzip) ctx.set('Content-Encoding', 'gzip');
  ctx.body = gzip ? asset.gzip : asset.body;
}
