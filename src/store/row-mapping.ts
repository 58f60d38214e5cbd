// Moved to shared/row-mapping.ts, beside the SQL builders both backends share. This path remains for
// the SQLite writer (sqlite/workload-store.ts) until it imports the shared module itself.
export { AGGREGATE_COLUMNS, RECORD_COLUMNS, toRecord, toRow, toView, durationSeconds, gpuHoursAt } from './common/row-mapping.js';
export type { GpuAggregates, WorkloadRow } from './common/row-mapping.js';
