// Schema v4: the rollups are kept by the writer, per batch, instead of by triggers per row. Each
// write transaction of the writer (src/store/writes/workload-writer.ts) reads the rollup columns of the rows it may change before
// and after it writes, and adds Σ figures(after) − Σ figures(before) to each rollup in one statement
// (src/store/rollups/, the code PostgreSQL's writer shares). The 8 triggers cost about half of every
// write (measured by a prototype since removed, in git history). The rollups of a v3 file are exact when it migrates, so they
// carry over as they are. workloads_lifetime_delete stays: it is no rollup. Like every migration, this
// SQL never changes once released (migrations.ts).
/** From this version on the writer keeps the rollups; before it, triggers did. */
export const WRITER_ROLLUPS_SINCE = 4;

export const V4 = `
DROP TRIGGER workloads_count_insert;
DROP TRIGGER workloads_count_delete;
DROP TRIGGER workloads_count_update;
DROP TRIGGER workloads_rollups_insert;
DROP TRIGGER workloads_rollups_delete;
DROP TRIGGER stats_daily_submitter_update;
DROP TRIGGER stats_daily_instance_type_update;
DROP TRIGGER workload_totals_update;
`;
