import { expect } from 'chai';
import { ROLLUP_COLUMN_TYPES, ROLLUP_SOURCE_COLUMNS, ROLLUPS } from '../../../src/store/rollups/definitions.js';
import { openDatabase, type Database } from '../../../src/store/sqlite/database.js';

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

describe('store/rollups definitions', () => {
  let db: Database;
  before(() => {
    db = openDatabase(':memory:');
  });
  after(() => db.close());

  const columnsOf = (table: string) => db.pragma(`table_info(${table})`) as ColumnInfo[];

  it('name every rollup table of the SQLite schema, and no other (usage keeps its own, by triggers: migrations/v06-usage.ts)', () => {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND (name GLOB 'stats_*' OR name GLOB 'workload_*') ORDER BY name").pluck().all();
    const notRollups = [
      'workload_gpu_lifetime', 'workload_pods', 'workload_usage', 'stats_daily_usage', 'stats_daily_usage_submitter', 'stats_daily_usage_initiative',
      'stats_weekly_usage_submitter',
    ];
    expect(tables.filter((t) => !notRollups.includes(t as string))).to.deep.equal(ROLLUPS.map((r) => r.table).sort());
  });

  for (const rollup of ROLLUPS) {
    it(`give ${rollup.table} its columns in the table's order, its primary key and its column types`, () => {
      const columns = columnsOf(rollup.table);
      expect(columns.map((c) => c.name)).to.deep.equal([...rollup.keys, ...rollup.values]);
      expect(columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name)).to.deep.equal(rollup.keys);
      expect(columns.every((c) => c.notnull === 1)).to.equal(true);
      const sqliteType = { text: 'TEXT', integer: 'INTEGER', real: 'REAL' } as const;
      expect(columns.map((c) => c.type)).to.deep.equal([...rollup.keys, ...rollup.values].map((c) => sqliteType[ROLLUP_COLUMN_TYPES[c]]));
    });
  }

  it('read only columns that the workloads table has, and every key column but day is one of them', () => {
    const workloads = columnsOf('workloads').map((c) => c.name);
    expect(workloads).to.include.members([...ROLLUP_SOURCE_COLUMNS]);
    const keys = new Set(ROLLUPS.flatMap((r) => r.keys).filter((k) => k !== 'day'));
    expect(ROLLUP_SOURCE_COLUMNS).to.include.members([...keys]);
  });
});
