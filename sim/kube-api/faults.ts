// Fault injection for the simulated API, switched at runtime by tests: the failures a reflector must
// survive (dropped streams, 5xx, 401, 429, hangs, restarts, compaction). Also counts requests so tests
// can assert "relisted exactly once" or "backed off instead of hammering".
import type { IncomingMessage, ServerResponse } from 'node:http';
import { kubeStatus } from './resources.js';

export type FaultStatus = 401 | 429 | 500;

/** Matches a request's pathname: exact string, or a RegExp; absent matches every path. */
export type PathMatch = string | RegExp;

export interface FaultOptions {
  /** How many matching requests the fault applies to (default 1 for errors, unlimited for hang). */
  count?: number;
  path?: PathMatch;
  /** Only watch requests (true) or only the others (false); absent matches both. */
  watch?: boolean;
}

/** What the faults need from the server that owns the sockets and the store. */
export interface FaultHooks {
  dropWatches(): number;
  restart(downMs: number): Promise<void>;
  compact(): void;
}

interface Rule {
  kind: FaultStatus | 'hang';
  remaining: number;
  path: PathMatch | undefined;
  watch: boolean | undefined;
}

export interface RequestRecord {
  path: string;
  watch: boolean;
}

export class KubeFaults {
  private rules: Rule[] = [];
  private readonly log: RequestRecord[] = [];

  constructor(private readonly hooks: FaultHooks) {}

  /** Answers the next `count` matching requests with `status` and a Status body. */
  failNext(status: FaultStatus, options: FaultOptions = {}): void {
    this.rules.push({ kind: status, remaining: options.count ?? 1, path: options.path, watch: options.watch });
  }

  /** Accepts matching requests and never answers them (until clear(), restart or close). */
  hang(options: FaultOptions = {}): void {
    this.rules.push({ kind: 'hang', remaining: options.count ?? Infinity, path: options.path, watch: options.watch });
  }

  /** Destroys the socket of every open watch stream; returns how many were dropped. */
  dropWatches(): number {
    return this.hooks.dropWatches();
  }

  /** Closes every connection and refuses new ones for `downMs`; the store survives, as etcd does. */
  restart(downMs = 200): Promise<void> {
    return this.hooks.restart(downMs);
  }

  /** Compacts the store at the current version: older watches and continue tokens get 410. */
  expireVersions(): void {
    this.hooks.compact();
  }

  /** Removes pending error and hang rules (already hung requests stay hung). */
  clear(): void {
    this.rules = [];
  }

  /** Requests seen (including faulted ones), optionally only for a path and/or only watches or lists. */
  requestCount(path?: PathMatch, options: { watch?: boolean } = {}): number {
    return this.log.filter((r) => matches(path, r.path) && (options.watch === undefined || options.watch === r.watch)).length;
  }

  /** Called first for every request; true when a fault took over the response. */
  intercept(req: IncomingMessage, res: ServerResponse, record: RequestRecord): boolean {
    this.log.push(record);
    const rule = this.rules.find((r) => r.remaining > 0 && matches(r.path, record.path) && (r.watch === undefined || r.watch === record.watch));
    if (rule === undefined) return false;
    rule.remaining -= 1;
    this.rules = this.rules.filter((r) => r.remaining > 0);
    if (rule.kind === 'hang') {
      // Read the request so the socket stays healthy, then say nothing: the client's timeout must act.
      req.resume();
      return true;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (rule.kind === 429) headers['retry-after'] = '1';
    res.writeHead(rule.kind, headers).end(JSON.stringify(kubeStatus(rule.kind, `Injected fault: ${rule.kind} for "${record.path}"`)));
    return true;
  }
}

function matches(pattern: PathMatch | undefined, path: string): boolean {
  if (pattern === undefined) return true;
  return typeof pattern === 'string' ? pattern === path : pattern.test(path);
}
