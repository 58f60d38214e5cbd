// The UPDATE writeWorkloads runs on a row it read: it names an indexed column only when a column of
// its family changes, so that an update leaves the indexes it does not change alone. What it writes
// is checked against the upsert by rows-with-pods.test.ts; this checks what it names, against the
// indexes the migrated schema really has.
import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import { toRow, type WorkloadRow } from '../../../src/store/rows/row-mapping.js';
import { migrate } from '../../../src/store/sqlite/migrations/migrate.js';
import { storedRowUpdateSql } from '../../../src/store/sqlite/stored-row-update.js';
import { aWorkload } from '../../support/workload-builder.js';

/** The columns each index of workloads holds, by name (expressions and partial indexes' WHERE left aside). */
function indexedColumns(): Set<string> {
  const db = new BetterSqlite3(':memory:');
  try {
    migrate(db);
    const indexes = db.prepare("SELECT name FROM pragma_index_list('workloads')").all() as { name: string }[];
    const columns = new Set<string>();
    for (const { name } of indexes) {
      for (const row of db.prepare('SELECT name FROM pragma_index_info(?)').all(name) as { name: string | null }[]) if (row.name !== null) columns.add(row.name);
    }
    return columns;
  } finally {
    db.close();
  }
}

/** The columns a SET list names. */
function setColumns(sql: string): string[] {
  const set = /SET ([\s\S]*?)(?:\s+FROM|\s+WHERE)/.exec(sql)?.[1] ?? '';
  return set.split(',').map((assignment) => assignment.trim().split(' ')[0] ?? '');
}

describe('store/writeWorkloads: the update of a stored row', () => {
  const indexed = indexedColumns();
  const stored: WorkloadRow = toRow(aWorkload({ status: 'running', startedAt: Date.parse('2026-11-01T10:00:00Z'), resourceVersion: '41' }));

  it('names no indexed column when only the resourceVersion changes, with or without the aggregates', () => {
    expect(indexed.size, 'the schema has indexed columns').to.be.greaterThan(5);
    for (const withAggregates of [false, true]) {
      const named = setColumns(storedRowUpdateSql(stored, { ...stored, resource_version: '42' }, withAggregates));
      expect(named).to.include.members(['resource_version', 'updated_at']);
      const aggregates = ['gpu_seconds_closed', 'open_gpus', 'open_gpu_start_sum'];
      expect(named.filter((c) => indexed.has(c) && !aggregates.includes(c)), String(withAggregates)).to.deep.equal([]);
    }
  });

  it('names the status and its times when the status changes, and not the keys', () => {
    const named = setColumns(storedRowUpdateSql(stored, { ...stored, status: 'completed', completed_at: Date.parse('2026-11-01T11:00:00Z'), exit_code: 0 }, false));
    expect(named).to.include.members(['status', 'started_at', 'completed_at', 'exit_code']);
    expect(named).to.not.include.members(['initiative_id']);
    expect(named).to.not.include('submitted_by');
    expect(named).to.not.include('organization_id');
    expect(named).to.not.include('submitted_at');
  });

  it('names a changed key, and every column a record holds is named when all change', () => {
    expect(setColumns(storedRowUpdateSql(stored, { ...stored, initiative_id: 'another-team' }, false))).to.include('initiative_id');
    const all = Object.fromEntries(Object.entries(stored).map(([column, value]) => [column, column === 'workload_id' ? value : typeof value === 'number' ? value + 1 : `${String(value)}-changed`])) as WorkloadRow;
    const named = setColumns(storedRowUpdateSql(stored, all, false));
    expect(named.sort()).to.deep.equal([...Object.keys(stored).filter((c) => c !== 'workload_id'), 'updated_at'].sort());
  });
});
