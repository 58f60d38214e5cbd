// Schema v9 on PostgreSQL: SQLite's migrations/v09-usage-index.ts, workload_usage_idle covering the sums of the
// usage rankings (INCLUDE: they are summed, never searched). The index is rebuilt under a lock that
// holds off the usage writers for as long as the build takes, not the readers of other tables. An
// older release reads and writes the same columns, hence compatible_since stays 8 (docs/scaling.md).
// Like every migration, this SQL never changes.

/** The keys of workload_usage_idle since v6: each team's usage in order of idle time. */
const IDLE_KEYS = 'organization_id, initiative_id, idle_seconds, workload_id';

export const V9 = `
DROP INDEX workload_usage_idle;
CREATE INDEX workload_usage_idle ON workload_usage (${IDLE_KEYS}) INCLUDE (util_weighted, util_seconds)
  WHERE util_seconds > 0;
`;
