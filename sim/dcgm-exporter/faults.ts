// The ways a node's exporter fails a scrape in real clusters, switched on per exporter by tests:
// slow, 5xx, not exposition at all, cut mid-body, never answering, resetting, and a body too large
// to accept. Each stays on until cleared, like a sick node.
import { Readable, pipeline } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';
import { hugeBody } from './huge-body.js';
import { METRICS_CONTENT_TYPE, acceptsGzip, sendMetrics, type Exchange, type MetricsPayload } from './respond.js';

export type SimExporterFault =
  /** Answers normally after `delayMs`, with the values current at answer time. */
  | { kind: 'slow'; delayMs: number }
  /** Answers `status` with promhttp's error text. */
  | { kind: 'status'; status: number }
  /** 200 with the metrics content type and an HTML page followed by binary bytes. */
  | { kind: 'garbage' }
  /** 200 whose body stops in the middle of a label set; the response then ends normally. */
  | { kind: 'truncated' }
  /** Reads the request and never answers, until the client gives up or the fleet closes. */
  | { kind: 'hang' }
  /** Resets the connection (TCP RST) without answering. */
  | { kind: 'reset' }
  /**
   * 200 with `bytes` of well-formed exposition text (uncompressed size; gzipped when asked), streamed.
   * `declareLength` sends a Content-Length (only without gzip) so a client can refuse it up front.
   */
  | { kind: 'huge'; bytes: number; declareLength?: boolean };

/** Waits `ms`; rejects or resolves early when `signal` aborts. Passed in: the simulator owns no clock. */
export type Delay = (ms: number, signal: AbortSignal) => Promise<void>;

/** A scrape to answer, and what a fault needs from its exporter. */
export interface FaultedScrape extends Exchange {
  /** The exporter's current body; read when the answer is written. */
  payload(): MetricsPayload;
  delay: Delay;
  /** Aborts when the fleet closes. */
  closing: AbortSignal;
}

export function serveFault(fault: SimExporterFault, scrape: FaultedScrape): void {
  const { req, res } = scrape;
  switch (fault.kind) {
    case 'slow':
      return void answerLater(fault.delayMs, scrape);
    case 'status':
      res
        .writeHead(fault.status, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`An error has occurred while serving metrics:\n\nsimulated fault: status ${fault.status}\n`);
      return;
    case 'garbage':
      res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(garbage());
      return;
    case 'truncated':
      return truncated(scrape);
    case 'hang':
      // Drain the request so the socket stays healthy, then say nothing: the client's timeout must act.
      req.resume();
      return;
    case 'reset':
      req.socket.resetAndDestroy();
      return;
    case 'huge':
      return huge(fault, scrape);
  }
}

async function answerLater(ms: number, scrape: FaultedScrape): Promise<void> {
  const { res, closing } = scrape;
  const gone = new AbortController();
  const onClose = (): void => gone.abort();
  res.once('close', onClose);
  try {
    await scrape.delay(ms, AbortSignal.any([gone.signal, closing]));
  } catch {
    // Aborted: the client left or the fleet is closing, nobody to answer.
  } finally {
    res.off('close', onClose);
  }
  if (res.destroyed || closing.aborted) return;
  sendMetrics(scrape, scrape.payload());
}

function truncated({ req, res, payload }: FaultedScrape): void {
  const text = payload().plain.toString('utf8');
  // Cut inside the label set of the sample line nearest the middle of the body.
  const brace = text.indexOf('{', Math.floor(text.length / 2));
  const close = brace < 0 ? -1 : text.indexOf('}', brace);
  const cut = brace < 0 || close < 0 ? Math.floor(text.length / 2) : brace + Math.max(1, Math.floor((close - brace) / 2));
  let body = Buffer.from(text.slice(0, cut), 'utf8');
  const headers: Record<string, string | number> = { 'content-type': METRICS_CONTENT_TYPE, connection: 'close' };
  if (acceptsGzip(req)) {
    body = gzipSync(body);
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = body.length;
  res.writeHead(200, headers).end(body);
}

function huge(fault: { bytes: number; declareLength?: boolean }, { req, res }: Exchange): void {
  const gzip = acceptsGzip(req);
  const headers: Record<string, string | number> = { 'content-type': METRICS_CONTENT_TYPE };
  if (gzip) headers['content-encoding'] = 'gzip';
  else if (fault.declareLength === true) headers['content-length'] = fault.bytes;
  res.writeHead(200, headers);
  const source = Readable.from(hugeBody(fault.bytes));
  // A client that stops reading at its cap destroys the socket: the pipeline's error is expected.
  const done = (): void => undefined;
  if (gzip) pipeline(source, createGzip(), res, done);
  else pipeline(source, res, done);
}

/** What a misconfigured port or proxy returns instead of exposition text, with bytes that are not UTF-8. */
function garbage(): Buffer {
  const html = Buffer.from('<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><h1>Bad Gateway</h1></body></html>\n');
  const binary = Buffer.alloc(512);
  let x = 0x2545f491;
  for (let i = 0; i < binary.length; i += 1) {
    // xorshift32: fixed bytes, so a failing test sees the same input every run.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    binary[i] = x & 0xff;
  }
  return Buffer.concat([html, binary]);
}
