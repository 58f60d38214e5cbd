// Schema v6 on PostgreSQL: SQLite's migrations/v06-usage.ts, what each workload's GPUs did and its daily
// rollup. Here the writers keep both with explicit statements (usage-writes.ts) rather than
// triggers: the bucket writer adds usage and its rollup in the statement that stores the bucket, the
// row writers move a workload's usage when its keys change, retention takes it out. Each statement
// locks usage rows in workload_id order, then rollup rows in key order, so writers never deadlock.
// An older writer would not move usage with the keys: compatible_since 6 (docs/scaling.md).
import { USAGE_ROLLUPS_V6, USAGE_VALUES, type UsageRollup } from '../../usage/usage-columns.js';

/** What the efficiency ranking orders by: the mean utilization of the seconds measured. */
const EFFICIENCY = '(util_weighted::float8 / util_seconds)';

/** A rollup table: its keys, then the figures. */
const rollupTable = ({ table, keys }: UsageRollup) => `CREATE TABLE ${table} (
${keys.map((k) => `  ${k.padEnd(15)} ${k === 'day' ? 'bigint' : 'text   COLLATE "C"'} NOT NULL,`).join('\n')}
${USAGE_VALUES.map((v) => `  ${v.padEnd(15)} bigint NOT NULL,`).join('\n')}
  PRIMARY KEY (${keys.join(', ')})
);
`;

export const V6 = `
CREATE TABLE workload_usage (
  workload_id     text   COLLATE "C" PRIMARY KEY,
  util_seconds    bigint NOT NULL DEFAULT 0,
  util_weighted   bigint NOT NULL DEFAULT 0,
  idle_seconds    bigint NOT NULL DEFAULT 0,
  power_seconds   bigint NOT NULL DEFAULT 0,
  energy_dj       bigint NOT NULL DEFAULT 0,
  gpu_errors      bigint NOT NULL DEFAULT 0,
  organization_id text   COLLATE "C",
  day             bigint,
  initiative_id   text   COLLATE "C",
  submitted_by    text   COLLATE "C",
  instance_type   text   COLLATE "C",
  failure_reason  text   COLLATE "C"
);

CREATE INDEX workload_usage_idle ON workload_usage (organization_id, initiative_id, idle_seconds, workload_id) WHERE util_seconds > 0;
CREATE INDEX workload_usage_efficiency ON workload_usage (organization_id, initiative_id, ${EFFICIENCY}, workload_id)
  WHERE util_seconds > 0;

${USAGE_ROLLUPS_V6.map(rollupTable).join('\n')}
`;
