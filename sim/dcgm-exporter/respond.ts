// How a simulated exporter writes a scrape answer: the exposition content type and gzip when the
// client asks for it, as Go's promhttp handler does. The body arrives pre-rendered (and pre-gzipped)
// so a thousand exporters scraped every few seconds cost a buffer write each.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A rendered scrape body; the gzip form is made on the first request that asks for it. */
export interface MetricsPayload {
  plain: Buffer;
  gzip(): Buffer;
}

export function metricsPayload(text: string): MetricsPayload {
  const plain = Buffer.from(text, 'utf8');
  let gzip: Buffer | undefined;
  return { plain, gzip: () => (gzip ??= gzipSync(plain)) };
}

/** True when `Accept-Encoding` lists gzip (or `*`) without `q=0`. */
export function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    if (coding.trim() !== 'gzip' && coding.trim() !== '*') return false;
    return !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p));
  });
}

/** One request and its response. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
}

export function sendMetrics({ req, res }: Exchange, payload: MetricsPayload): void {
  const gzip = acceptsGzip(req);
  const body = gzip ? payload.gzip() : payload.plain;
  const headers: Record<string, string | number> = { 'content-type': METRICS_CONTENT_TYPE, 'content-length': body.length };
  if (gzip) headers['content-encoding'] = 'gzip';
  res.writeHead(200, headers).end(body);
}

/** Go's http.NotFound body. */
export function sendNotFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' }).end('404 page not found\n');
}
