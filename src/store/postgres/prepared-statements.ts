// Names for the reads that PostgreSQL plans once per connection. pg sends a statement without a name as
// an unnamed statement, parsed and planned at every call: over 17 monthly partitions a list page plans
// in 2.3-5 ms and runs in 0.2 ms. A named one is parsed once per connection (pg remembers which
// names each connection has prepared, so a new connection prepares again), and its generic plan, which
// prunes partitions at run time, is reused (plan_cache_mode = auto, or inSnapshot's genericPlans).
//
// A name is a hash of the typed text: the builders produce a closed set of texts (their filter shapes),
// and the reads that are named have 19 of them, each list shape at one of three row counts
// (workload-index.ts rowsToRead), so a connection holds at most about 60 statements, about 185 kB
// of server memory each with its generic plan over 17 months (clients mostly use one page size).
// The generation in the name starts afresh when the server no longer agrees with a connection's
// statements (isStaleStatement): after a migration changed what a prepared statement returns, or
// behind a pooler that lost them. A connection that failed inside a snapshot transaction is dropped;
// the others keep their older statements, unused, until they close.
import { createHash } from 'node:crypto';

const CACHE_LIMIT = 2_000;

/** SQLSTATEs of a prepared statement the server cannot run as pg remembers it. */
const STALE_STATES = new Set([
  '26000', // invalid_sql_statement_name: the session lost it (DISCARD ALL, a pooler's other session)
  '42P05', // duplicate_prepared_statement: the session has it and pg does not know (a pooler)
]);
// feature_not_supported covers more than this one case: only its message tells it apart.
const RESULT_TYPE_CHANGED = { code: '0A000', message: 'cached plan must not change result type' };

/** Whether `error` comes from a prepared statement the server no longer agrees with: run again under new names, it succeeds. */
export function isStaleStatement(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string') return false;
  return STALE_STATES.has(code) ||
    (code === RESULT_TYPE_CHANGED.code && typeof message === 'string' && message.includes(RESULT_TYPE_CHANGED.message));
}

export class PreparedStatements {
  #generation = 0;
  readonly #hashes = new Map<string, string>();

  /** Changes each time the names start afresh. */
  get generation(): number {
    return this.#generation;
  }

  /** The statement name of a typed text (at most 63 bytes, PostgreSQL's limit). */
  nameOf(text: string): string {
    let hash = this.#hashes.get(text);
    if (hash === undefined) {
      hash = createHash('sha256').update(text).digest('hex').slice(0, 24);
      if (this.#hashes.size >= CACHE_LIMIT) this.#hashes.delete(this.#hashes.keys().next().value as string);
      this.#hashes.set(text, hash);
    }
    return `gpucap_${this.#generation}_${hash}`;
  }

  /**
   * After a read begun under `generation` failed with `error`: whether to run it again, under new
   * names. Reads that fail together on the same stale statements start the names afresh once.
   */
  renewAfter(error: unknown, generation: number): boolean {
    if (!isStaleStatement(error)) return false;
    if (generation === this.#generation) this.#generation += 1;
    return true;
  }
}
