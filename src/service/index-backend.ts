// The index: its backend, opened on the configured location (SQLite or PostgreSQL), and the
// retention of finished workloads.
import { hostname } from 'node:os';
import { databaseLocation, instanceIdOf } from '../config/schema.js';
import { openBackend } from '../store/backend.js';
import { type BackendLocation, type IndexBackend } from '../store/index-backend.js';
import { RetentionJob } from '../store/retention/retention-job.js';
import type { ServiceContext } from './service-context.js';

const RETENTION_INTERVAL_MS = 3_600_000;

export interface OpenedIndex {
  backend: IndexBackend;
  location: BackendLocation;
  /** This replica's name in the clusters' write locks. */
  instanceId: string;
}

/** Opens the index; it closes in the last phase of the stop, once nothing reads or writes it. */
export async function openIndex(context: ServiceContext): Promise<OpenedIndex> {
  const { config, clock, logger, metrics, parts } = context;
  const location = databaseLocation(config);
  const instanceId = instanceIdOf(config, process.env, hostname());
  const backend = await openBackend(location, {
    instanceId,
    clock,
    readWorkers: config.read_workers,
    writeWorker: config.write_worker,
    backgroundNiceness: config.background_niceness,
    poolSize: config.db_pool_size,
    preparedStatements: config.db_prepared_statements,
    leaseSeconds: config.ha_lease_seconds,
    retentionDays: config.retention_days,
    logger,
    gauge: (name, help, read) => metrics.gaugeFrom(name, help, read),
  });
  parts.phase('close').add('index', () => backend.close());
  return { backend, location, instanceId };
}

/**
 * Deletes finished workloads past retention_days. Stopped with the flushes, after every source: a pass
 * under way halts at its next pause, among the last writes of the index.
 */
export function startRetention(context: ServiceContext, backend: IndexBackend): RetentionJob {
  const { config, clock, logger, parts } = context;
  const retention = new RetentionJob(backend.purger, {
    retentionDays: config.retention_days,
    intervalMs: RETENTION_INTERVAL_MS,
    clock,
    logger: logger.child({ component: 'retention' }),
  });
  parts.phase('flush').add('retention', () => retention.stop());
  retention.start();
  return retention;
}
