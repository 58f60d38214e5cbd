// The read port on PostgreSQL: the store's one read implementation over the read pool's executor.
import type pg from 'pg';
import { POSTGRES } from '../sql/dialect.js';
import { SqlWorkloadIndex } from '../reads/workload-index.js';
import { PostgresReadExecutor, type PostgresReadOptions } from './executor.js';

export function postgresIndex(pool: pg.Pool, options: PostgresReadOptions = {}): SqlWorkloadIndex {
  return new SqlWorkloadIndex(new PostgresReadExecutor(pool, options), POSTGRES);
}
