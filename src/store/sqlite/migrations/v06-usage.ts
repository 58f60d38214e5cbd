// Schema v6: what each workload's GPUs did (src/domain/gpu-usage.ts), and the daily rollup of it that
// statistics and series read. The lifetime saves add to workload_usage, which carries the keys of its
// workloads row (NULL while that row does not exist yet: samples can be flushed before the indexer
// writes it). The row writer places it when it writes a row whose keys it has not (a new row, a
// failure reason set, a label changed: rollup-apply.ts), one statement per batch. Triggers on
// workload_usage keep stats_daily_usage the sum of workload_usage over those keys: usage changes once
// per lifetime flush per running workload and moves almost never, so a trigger per change costs
// little, where the workloads rows, written far more often, carry none but the delete cascade. Every
// value is an integer: the rollup is exact.
// Workloads indexed before v6 have no usage; their figures read null with coverage 0.
import { USAGE_KEYS, USAGE_ROLLUPS_V6, USAGE_VALUES, usageKeySql, type UsageRollup } from '../../usage/usage-columns.js';


const sameKeys = USAGE_KEYS.map((k) => `OLD.${k} IS NEW.${k}`).join(' AND ');

/** Adds `values` (one SQL expression per USAGE_VALUES column) at the keys of `p` (OLD. or NEW.) in each rollup, when `when` holds. */
function addAt(rollups: readonly UsageRollup[], p: string, values: (column: string) => string, when: string): string {
  return rollups.map((rollup) => `
  INSERT INTO ${rollup.table} (${rollup.keys.join(', ')}, ${USAGE_VALUES.join(', ')})
    SELECT ${rollup.keys.map((k) => usageKeySql(rollup, k, `${p}${k}`)).join(', ')}, ${USAGE_VALUES.map(values).join(', ')} WHERE ${when}
    ON CONFLICT DO UPDATE SET ${USAGE_VALUES.map((v) => `${v} = ${v} + excluded.${v}`).join(', ')};`).join('');
}

/** Drops each rollup's row at the keys of `p` once nothing is left in it. */
const dropEmptyAt = (rollups: readonly UsageRollup[], p: string) => rollups.map((rollup) => {
  const atKeys = rollup.keys.map((k) => `${k} = ${usageKeySql(rollup, k, `${p}${k}`)}`).join(' AND ');
  return `
  DELETE FROM ${rollup.table} WHERE ${atKeys} AND util_seconds = 0 AND power_seconds = 0;`;
}).join('');

/** A rollup table: its keys, then the figures. */
export const usageRollupTable = ({ table, keys }: UsageRollup) => `
CREATE TABLE ${table} (
${keys.map((k) => `  ${k.padEnd(15)} ${k === 'day' ? 'INTEGER' : 'TEXT   '} NOT NULL,`).join('\n')}
${USAGE_VALUES.map((v) => `  ${v.padEnd(15)} INTEGER NOT NULL,`).join('\n')}
  PRIMARY KEY (${keys.join(', ')})
) STRICT, WITHOUT ROWID;
`;

/** The triggers on workload_usage that keep `rollups` its sums over their keys. */
export const usageRollupTriggers = (rollups: readonly UsageRollup[]) =>
  `CREATE TRIGGER workload_usage_added AFTER INSERT ON workload_usage WHEN NEW.day IS NOT NULL BEGIN${
  addAt(rollups, 'NEW.', (v) => `NEW.${v}`, 'true')}
END;

CREATE TRIGGER workload_usage_changed AFTER UPDATE ON workload_usage BEGIN${
  addAt(rollups, 'NEW.', (v) => `NEW.${v} - (CASE WHEN ${sameKeys} THEN OLD.${v} ELSE 0 END)`, 'NEW.day IS NOT NULL')}${
  addAt(rollups, 'OLD.', (v) => `-OLD.${v}`, `OLD.day IS NOT NULL AND NOT (${sameKeys})`)}${dropEmptyAt(rollups, 'OLD.')}
END;

CREATE TRIGGER workload_usage_removed AFTER DELETE ON workload_usage WHEN OLD.day IS NOT NULL BEGIN${
  addAt(rollups, 'OLD.', (v) => `-OLD.${v}`, 'true')}${dropEmptyAt(rollups, 'OLD.')}
END;
`;

/** What the efficiency ranking orders by: the mean utilization of the seconds measured. */
const EFFICIENCY = '(CAST(util_weighted AS REAL) / util_seconds)';

export const V6 = `
-- Per workload, in whole seconds and stored units (0.01 %, 0.1 W × s): what its GPUs did.
CREATE TABLE workload_usage (
  workload_id     TEXT    PRIMARY KEY,
  util_seconds    INTEGER NOT NULL DEFAULT 0,
  util_weighted   INTEGER NOT NULL DEFAULT 0,
  idle_seconds    INTEGER NOT NULL DEFAULT 0,
  power_seconds   INTEGER NOT NULL DEFAULT 0,
  energy_dj       INTEGER NOT NULL DEFAULT 0,
  gpu_errors      INTEGER NOT NULL DEFAULT 0,
  organization_id TEXT,
  day             INTEGER,
  initiative_id   TEXT,
  submitted_by    TEXT,
  instance_type   TEXT,
  failure_reason  TEXT
) STRICT, WITHOUT ROWID;

-- The idle and efficiency rankings: per team, in order of the figure.
CREATE INDEX workload_usage_idle ON workload_usage (organization_id, initiative_id, idle_seconds, workload_id) WHERE util_seconds > 0;
CREATE INDEX workload_usage_efficiency ON workload_usage (organization_id, initiative_id, ${EFFICIENCY}, workload_id)
  WHERE util_seconds > 0;

-- Statistics and series of usage, per day of submission, shaped like the workloads' rollups.
${USAGE_ROLLUPS_V6.map(usageRollupTable).join('')}
${usageRollupTriggers(USAGE_ROLLUPS_V6)}
-- A deleted workload takes its usage with it (retention), and so out of the rollup.
CREATE TRIGGER workloads_usage_delete AFTER DELETE ON workloads BEGIN
  DELETE FROM workload_usage WHERE workload_id = OLD.workload_id;
END;
`;
