// A store on a real SQLite file in a fresh temporary folder, removed again by close().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../src/domain/clock.js';
import type { Scope } from '../../src/access/principal.js';
import type { WorkloadFilter } from '../../src/query/ports.js';
import { openDatabase, type Database } from '../../src/store/sqlite/database.js';
import { SqliteWorkloadStore } from '../../src/store/sqlite/workload-store.js';

export interface TempStore {
  dir: string;
  path: string;
  db: Database;
  store: SqliteWorkloadStore;
  close(): void;
}

export function tempDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'gpucap-store-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function openTempStore(options: { clock?: Clock } = {}): TempStore {
  const { dir, remove } = tempDir();
  const path = join(dir, 'nested', 'index.db');
  const db = openDatabase(path);
  const store = new SqliteWorkloadStore(db, options);
  return {
    dir,
    path,
    db,
    store,
    close: () => {
      if (db.open) db.close();
      remove();
    },
  };
}

export const ORG = 'acme';
export const ADMIN: Scope = { organizationId: ORG, initiatives: null };

export function inOrg(extra: Partial<WorkloadFilter> = {}, scope: Scope = ADMIN): WorkloadFilter {
  return { scope, ...extra };
}

export const at = (iso: string): number => Date.parse(iso);

export const HOUR_MS = 3_600_000;
