// The pending and running rows of a cluster, which the indexer reconciles after a relist: read on
// the main thread's connection, synchronously, as the indexer asks (WorkloadSink.listUnfinished).
import type { WorkloadRecord } from '../../domain/workload.js';
import { toRecord, type WorkloadRow } from '../rows/row-mapping.js';
import { RECORD_SELECT } from '../sql/workload-sql.js';
import type { StatementCache } from './statement-cache.js';

const UNFINISHED = `SELECT ${RECORD_SELECT} FROM workloads w WHERE w.cluster_id = ? AND w.status IN ('pending', 'running')`;

export function listUnfinished(statements: StatementCache, clusterId: string): WorkloadRecord[] {
  return (statements.get(UNFINISHED).all(clusterId) as WorkloadRow[]).map(toRecord);
}
