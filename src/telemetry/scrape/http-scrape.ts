// One GET of an exporter's /metrics, bounded in time and size. Exporters answer on plain HTTP inside
// the cluster network; the response may be gzipped (Go's promhttp compresses when asked, which cuts a
// large node's payload ~10×). The size cap applies to the decompressed text, the thing held in memory.
import { Agent, request, type IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';

export type ScrapeFailureReason = 'timeout' | 'http_status' | 'too_large' | 'connection' | 'encoding' | 'parse';

/** Why a scrape failed; `reason` is the stable label used in metrics. */
export class ScrapeError extends Error {
  readonly code = 'SCRAPE_FAILED';
  readonly reason: ScrapeFailureReason;
  constructor(reason: ScrapeFailureReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export type Scrape = (url: string) => Promise<string>;

export interface HttpScrapeOptions {
  timeoutMs: number;
  maxBytes: number;
  /** Sockets kept open per exporter between ticks. */
  agent?: Agent;
}

export function createHttpScrape(options: HttpScrapeOptions): Scrape {
  const agent = options.agent ?? new Agent({ keepAlive: true, maxSockets: 1, maxFreeSockets: 1, scheduling: 'lifo' });
  return async (url) => {
    try {
      return await scrapeOnce(url, { ...options, agent });
    } catch (error) {
      // A kept-alive socket the exporter closed just as we reused it: the request never reached it.
      if (error instanceof StaleSocketError) return scrapeOnce(url, { ...options, agent });
      throw error;
    }
  };
}

class StaleSocketError extends ScrapeError {}

function scrapeOnce(url: string, options: HttpScrapeOptions & { agent: Agent }): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const fail = (error: ScrapeError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new ScrapeError('timeout', `No complete answer within ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    const req = request(url, {
      agent: options.agent,
      headers: { accept: 'text/plain;version=0.0.4;q=1,*/*;q=0.1', 'accept-encoding': 'gzip' },
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && error.code === 'ECONNRESET';
      fail(new (stale ? StaleSocketError : ScrapeError)('connection', `Request failed: ${error.message}`));
    });
    req.on('response', (response: IncomingMessage) => {
      if (response.statusCode !== 200) {
        response.resume();
        fail(new ScrapeError('http_status', `Exporter answered HTTP ${response.statusCode ?? '?'}`));
        return;
      }
      const encoding = response.headers['content-encoding'];
      let body: Readable = response;
      if (encoding === 'gzip') {
        const gunzip = createGunzip();
        gunzip.on('error', (error) => fail(new ScrapeError('encoding', `Cannot decompress the gzip body: ${error.message}`)));
        body = response.pipe(gunzip);
      } else if (encoding !== undefined && encoding !== 'identity') {
        fail(new ScrapeError('encoding', `Unsupported Content-Encoding "${encoding}"`));
        return;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      body.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > options.maxBytes) {
          fail(new ScrapeError('too_large', `Body exceeds the ${options.maxBytes}-byte limit`));
          return;
        }
        chunks.push(chunk);
      });
      // A connection cut before the body ends is a truncated payload, never a short valid one.
      response.on('aborted', () => fail(new ScrapeError('connection', 'Connection closed before the body ended')));
      response.on('error', (error) => fail(new ScrapeError('connection', `Body read failed: ${error.message}`)));
      body.on('end', () => {
        if (settled) return;
        if (!response.complete) {
          fail(new ScrapeError('connection', 'Connection closed before the body ended'));
          return;
        }
        settled = true;
        clearTimeout(timer);
        resolve(Buffer.concat(chunks, bytes).toString('utf8'));
      });
    });
    req.end();
  });
}
