// What the project's own tools (the benchmarks of bench/) take of the store below its ports, in one
// place, so that the store's folders can move without touching bench/. What a tool can get through
// openBackend (backend.ts), index-backend.ts or ports.ts it takes there; this module is for the rest,
// where the tool must hold the connection itself:
// - the read port over a connection the tool wraps, so that the SQL profile records what the store's
//   own reads run, on a connection opened with the service's settings;
// - the writer, lifetime totals and migrations on an SQLite connection set up for bulk loading;
// - a PostgreSQL load around the writer, as `gpucap migrate` copies an index (its chunk writes are
//   src/cli/migrate's): the row mapping, partitions and the rollups rebuilt from the rows;
// - GPU summaries over pools whose server backends the tool measures;
// - each backend's migrations, whose text keys the tools' cached datasets.
// Re-exports only, and nothing under src/ imports this module (test/architecture.test.ts): the
// service never depends on it.
export { openDatabase } from './sqlite/database.js';
export { sqliteIndex, sqliteWriter } from './sqlite/connection-ports.js';
export { SqliteLifetimeStore } from './sqlite/lifetime-store.js';
export { MIGRATIONS as SQLITE_MIGRATIONS, migrate as migrateSqlite } from './sqlite/migrations/migrate.js';
export { connectMaintenance } from './postgres/connection.js';
export { toRow } from './rows/row-mapping.js';
export { ensurePartitions } from './postgres/partitions.js';
export { rebuildRollups } from './postgres/rollup-rebuild.js';
export { PostgresGpuSummaries } from './postgres/gpu-summaries.js';
export { MIGRATIONS as POSTGRES_MIGRATIONS } from './postgres/migrations/schema.js';
