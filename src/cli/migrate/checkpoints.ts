// Where `gpucap migrate` records its progress in the target: one row per (source_id, phase) of
// gpucap_transfer, written in the same transaction as the rows it counts, so that a run stopped at any
// point resumes after the last chunk that committed, and never copies one twice.
//
// A run is a chain of rows under one source_id (the source's contents: SourceState.id):
// - phase 'source': last_key holds the run's plan as JSON (ChainPlan);
// - every other phase: last_key is the keyset position after its last chunk, a JSON array ('[]'
//   before the first row), and NULL once the phase is done; rows counts what it copied.
// The table belongs to the tool, not to the service's schema: it is created here when missing, and
// the service never reads it.
import type { Queryable } from '../../store/postgres/transaction.js';

export const PHASES = ['partitions', 'workloads', 'pods', 'prune', 'lifetime', 'usage', 'fleet', 'rollups', 'verify'] as const;
export type Phase = (typeof PHASES)[number];

/** What a chain copies. */
export interface ChainPlan {
  /** 'full': every row; 'delta': the rows changed since `since`, over an earlier chain's copy. */
  mode: 'full' | 'delta';
  since: number | null;
  /** The clusters of the source's rows: what the chain owns in the target. */
  clusters: string[];
  /** The source file as the operator named it, for messages. */
  path: string;
  /** The source's state (SourceState) when the chain started. */
  schemaVersion: number;
  maxUpdatedAt: number;
  workloads: number;
  startedAt: number;
}

export interface PhaseProgress {
  /** The keyset position after the last chunk; null once the phase is done. */
  lastKey: unknown[] | null;
  rows: number;
}

export interface Chain {
  sourceId: string;
  plan: ChainPlan;
  phases: Map<Phase, PhaseProgress>;
  /** The newest updated_at of its rows (epoch ms). */
  updatedAt: number;
  /** Its last phase, the verification, passed. */
  done: boolean;
}

const CREATE = `
CREATE TABLE IF NOT EXISTS gpucap_transfer (
  source_id  text        NOT NULL,
  phase      text        NOT NULL,
  last_key   text,
  rows       bigint      NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (source_id, phase)
)`;

export async function ensureCheckpointTable(client: Queryable): Promise<void> {
  await client.query(CREATE);
}

/** Every chain in the target, the most recently updated first. */
export async function readChains(client: Queryable): Promise<Chain[]> {
  const { rows } = await client.query<{ source_id: string; phase: string; last_key: string | null; rows: number; updated_ms: number }>(
    `SELECT source_id, phase, last_key, rows, (EXTRACT(EPOCH FROM updated_at) * 1000)::bigint AS updated_ms
     FROM gpucap_transfer ORDER BY source_id, phase`,
  );
  const chains = new Map<string, Chain>();
  for (const row of rows.filter((r) => r.phase === 'source' && r.last_key !== null)) {
    chains.set(row.source_id, {
      sourceId: row.source_id,
      plan: JSON.parse(row.last_key as string) as ChainPlan,
      phases: new Map(),
      updatedAt: row.updated_ms,
      done: false,
    });
  }
  for (const row of rows) {
    const chain = chains.get(row.source_id);
    if (chain === undefined || !(PHASES as readonly string[]).includes(row.phase)) continue;
    const lastKey = row.last_key === null ? null : (JSON.parse(row.last_key) as unknown[]);
    chain.phases.set(row.phase as Phase, { lastKey, rows: row.rows });
    chain.updatedAt = Math.max(chain.updatedAt, row.updated_ms);
  }
  for (const chain of chains.values()) chain.done = chain.phases.get('verify')?.lastKey === null;
  return [...chains.values()].sort((a, b) => b.updatedAt - a.updatedAt);
}

export async function startChain(client: Queryable, sourceId: string, plan: ChainPlan): Promise<Chain> {
  await client.query(
    `INSERT INTO gpucap_transfer (source_id, phase, last_key) VALUES ($1, 'source', $2)
     ON CONFLICT (source_id, phase) DO UPDATE SET last_key = excluded.last_key, updated_at = clock_timestamp()`,
    [sourceId, JSON.stringify(plan)],
  );
  return { sourceId, plan, phases: new Map(), updatedAt: plan.startedAt, done: false };
}

/**
 * Records a chunk: the position after it (null: the phase is done) and the rows it copied. Run it in
 * the chunk's own transaction.
 */
export async function saveProgress(
  client: Queryable,
  sourceId: string,
  phase: Phase,
  lastKey: unknown[] | null,
  rows: number,
): Promise<void> {
  await client.query(
    `INSERT INTO gpucap_transfer (source_id, phase, last_key, rows) VALUES ($1, $2, $3, $4)
     ON CONFLICT (source_id, phase) DO UPDATE SET last_key = excluded.last_key, rows = gpucap_transfer.rows + excluded.rows,
       updated_at = clock_timestamp()`,
    [sourceId, phase, lastKey === null ? null : JSON.stringify(lastKey), rows],
  );
}

export async function dropChains(client: Queryable, sourceIds: readonly string[]): Promise<void> {
  await client.query('DELETE FROM gpucap_transfer WHERE source_id = ANY($1::text[])', [sourceIds]);
}
