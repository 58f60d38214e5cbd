// The GPU aggregates of a workload from its pods. The writer sums them again with AGGREGATES_OF_PODS,
// this one text, whenever a workload's pods change, so that every row holds the same doubles to the
// last bit however its pods came (the terms are summed in the order of workload_pods_workload). Pods
// that never started hold no GPU time; times are stored in ms, the aggregates in seconds. PostgreSQL
// sums whole GPU-ms and divides once (its driver's AGGREGATES_OF_PODS): the two differ in the last
// bits, never in whole GPU-ms.

/** One row (closed, open_gpus, open_start): the aggregates of workload @workload_id. */
export const AGGREGATES_OF_PODS = `
    SELECT TOTAL(CASE WHEN finished_at IS NOT NULL THEN gpus * MAX(0, finished_at - started_at) / 1000.0 END) AS closed,
           COALESCE(SUM(CASE WHEN finished_at IS NULL THEN gpus END), 0) AS open_gpus,
           TOTAL(CASE WHEN finished_at IS NULL THEN gpus * started_at / 1000.0 END) AS open_start
    FROM workload_pods WHERE workload_id = @workload_id AND started_at IS NOT NULL`;
