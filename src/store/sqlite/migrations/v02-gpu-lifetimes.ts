// Schema 2 of the SQLite index: GPU metric totals over each workload's life. Released migrations'
// SQL never changes.

// GPU metric totals over each workload's life (job_lifetime), one row per workload and metric, in the
// metric's reported unit. No foreign key: samples can be flushed before the indexer has written the
// workload's row. The trigger keeps retention's deletes covering them.
export const V2 = `
CREATE TABLE workload_gpu_lifetime (
  workload_id  TEXT    NOT NULL,
  metric       TEXT    NOT NULL,
  sample_count INTEGER NOT NULL CHECK (sample_count > 0),
  sum          REAL    NOT NULL,
  min          REAL    NOT NULL,
  max          REAL    NOT NULL,
  current      REAL,
  PRIMARY KEY (workload_id, metric)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER workloads_lifetime_delete AFTER DELETE ON workloads BEGIN
  DELETE FROM workload_gpu_lifetime WHERE workload_id = OLD.workload_id;
END;
`;
