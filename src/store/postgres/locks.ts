// Advisory lock keys. 1735 is gpucap's class id, the first half of every advisory lock it takes;
// a cluster's write lock is (1735, clusters.cluster_key), which is never 0 (an identity starts at 1).
export const LOCK_CLASS = 1735;

/**
 * The schema lock (1735, 0): migrations, partition creation and the maintenance pass hold it for
 * their transaction, so that two replicas never run DDL on the same tables at once.
 */
export const SCHEMA_LOCK_SQL = `SELECT pg_advisory_xact_lock(${LOCK_CLASS}, 0)`;
