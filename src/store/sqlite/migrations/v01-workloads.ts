// Schema 1 of the SQLite index: workloads, their pods, the count rollup and their indexes. Released
// migrations' SQL never changes: files on PersistentVolumes already carry it.

// Every list index leads with organization_id (every read is inside one organization) and ends with
// (submitted_at, workload_id), so one index both narrows to the filter and yields the keyset order
// without a sort: SQLite walks it backwards for DESC and starts the walk at the row-value cursor.
// is_managed is low-cardinality but still pays off because the order comes for free.
// For a team scope (`initiative_id IN json_each(...)`) SQLite walks workloads_org_submitted in order
// and tests each row against the list, stopping after one page. The plans are checked in
// test/store/reads/list.test.ts.
//
// workloads_org_submitted also carries every column that statistics and the GPU-hours ranking read,
// so those scans over a date range (or a whole organization) never visit the table: at a million
// rows that is the difference between sequential index pages and one random table page per row.
export const V1 = `
CREATE TABLE workloads (
  workload_id        TEXT    PRIMARY KEY,
  organization_id    TEXT    NOT NULL,
  cluster_id         TEXT    NOT NULL,
  namespace          TEXT    NOT NULL,
  name               TEXT    NOT NULL,
  kind               TEXT    NOT NULL CHECK (kind IN ('Job', 'Pod')),
  status             TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
  submitted_by       TEXT    NOT NULL,
  initiative_id      TEXT    NOT NULL,
  instance_type      TEXT    NOT NULL,
  gpu_count          INTEGER NOT NULL CHECK (gpu_count >= 0),
  submitted_at       INTEGER NOT NULL,
  started_at         INTEGER,
  completed_at       INTEGER,
  exit_code          INTEGER,
  is_managed         INTEGER NOT NULL CHECK (is_managed IN (0, 1)),
  resource_version   TEXT    NOT NULL DEFAULT '',
  -- GPU-hours at time t (seconds) = (gpu_seconds_closed + open_gpus * t - open_gpu_start_sum) / 3600,
  -- kept in step with workload_pods so lists and rankings never join the pods.
  gpu_seconds_closed REAL    NOT NULL DEFAULT 0,
  open_gpus          INTEGER NOT NULL DEFAULT 0,
  open_gpu_start_sum REAL    NOT NULL DEFAULT 0,
  updated_at         INTEGER NOT NULL
) STRICT;

CREATE INDEX workloads_org_submitted  ON workloads (
  organization_id, submitted_at, workload_id,
  initiative_id, submitted_by, instance_type, status, is_managed, started_at, completed_at,
  gpu_seconds_closed, open_gpus, open_gpu_start_sum);
CREATE INDEX workloads_org_initiative ON workloads (organization_id, initiative_id, submitted_at, workload_id);
CREATE INDEX workloads_org_status     ON workloads (organization_id, status, submitted_at, workload_id);
CREATE INDEX workloads_org_submitter  ON workloads (organization_id, submitted_by, submitted_at, workload_id);
CREATE INDEX workloads_org_managed    ON workloads (organization_id, is_managed, submitted_at, workload_id);

-- Retention walks finished rows by completion time across every organization.
CREATE INDEX workloads_completed ON workloads (completed_at) WHERE completed_at IS NOT NULL;
-- Running and pending rows are few (a few percent); partial indexes keep them at hand. activeGpus
-- sums the running ones from the index alone; the indexer reconciles a cluster's unfinished ones
-- after a relist.
CREATE INDEX workloads_running ON workloads (organization_id, initiative_id, gpu_count) WHERE status = 'running';
CREATE INDEX workloads_unfinished ON workloads (cluster_id) WHERE status IN ('pending', 'running');

-- COUNT(*) over the index walks every match: ~100 ms for an organization of a million rows, on
-- every page of the list. total_count of a list without dates is summed from this rollup instead
-- (a few thousand rows at most: initiatives × users × statuses), kept exact by the triggers.
CREATE TABLE workload_counts (
  organization_id TEXT    NOT NULL,
  initiative_id   TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  submitted_by    TEXT    NOT NULL,
  is_managed      INTEGER NOT NULL,
  n               INTEGER NOT NULL,
  PRIMARY KEY (organization_id, initiative_id, status, submitted_by, is_managed)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER workloads_count_insert AFTER INSERT ON workloads BEGIN
  INSERT INTO workload_counts VALUES (NEW.organization_id, NEW.initiative_id, NEW.status, NEW.submitted_by, NEW.is_managed, 1)
  ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER workloads_count_delete AFTER DELETE ON workloads BEGIN
  UPDATE workload_counts SET n = n - 1
  WHERE (organization_id, initiative_id, status, submitted_by, is_managed)
      = (OLD.organization_id, OLD.initiative_id, OLD.status, OLD.submitted_by, OLD.is_managed);
END;

CREATE TRIGGER workloads_count_update
AFTER UPDATE OF organization_id, initiative_id, status, submitted_by, is_managed ON workloads
WHEN (OLD.organization_id, OLD.initiative_id, OLD.status, OLD.submitted_by, OLD.is_managed)
  IS NOT (NEW.organization_id, NEW.initiative_id, NEW.status, NEW.submitted_by, NEW.is_managed)
BEGIN
  UPDATE workload_counts SET n = n - 1
  WHERE (organization_id, initiative_id, status, submitted_by, is_managed)
      = (OLD.organization_id, OLD.initiative_id, OLD.status, OLD.submitted_by, OLD.is_managed);
  INSERT INTO workload_counts VALUES (NEW.organization_id, NEW.initiative_id, NEW.status, NEW.submitted_by, NEW.is_managed, 1)
  ON CONFLICT DO UPDATE SET n = n + 1;
END;

CREATE TABLE workload_pods (
  pod_uid     TEXT    PRIMARY KEY,
  workload_id TEXT    NOT NULL REFERENCES workloads (workload_id) ON DELETE CASCADE,
  gpus        INTEGER NOT NULL CHECK (gpus >= 0),
  started_at  INTEGER,
  finished_at INTEGER
) STRICT;

-- Both pod indexes cover every column a query reads, so the pods table itself is never visited:
-- by workload for cascaded deletes, aggregate refreshes and joins; by finish time for usage windows
-- (the pods still running at a window's start: finished_at after it, or NULL).
CREATE INDEX workload_pods_workload ON workload_pods (workload_id, started_at, finished_at, gpus);
CREATE INDEX workload_pods_finished ON workload_pods (finished_at, started_at, gpus, workload_id);
`;
