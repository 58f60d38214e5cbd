// Schema v14: the fleet's history (src/domain/fleet-ledger.ts). Per node, the GPU-milliseconds of
// each state by clock hour, and the same summed by UTC day, so that a month's read scans a day row per
// node rather than 24 (1,250 nodes: 37,500 rows for 30 days). Each table is clustered by
// organization then time, the order every read takes; retention finds the old rows by their time
// alone. fleet_marks holds, per cluster, up to when its writer has added: the next writer starts
// there and nothing is counted twice. Like every migration, this SQL never changes once released.
export const V14 = `
CREATE TABLE fleet_hours (
  organization_id TEXT    NOT NULL,
  hour            INTEGER NOT NULL,
  cluster_id      TEXT    NOT NULL,
  node            TEXT    NOT NULL,
  gpu_model       TEXT,
  instance_type   TEXT    NOT NULL,
  capacity_ms     REAL    NOT NULL,
  unavailable_ms  REAL    NOT NULL,
  allocated_ms    REAL    NOT NULL,
  idle_ms         REAL    NOT NULL,
  PRIMARY KEY (organization_id, hour, cluster_id, node)
) STRICT, WITHOUT ROWID;
CREATE INDEX fleet_hours_by_age ON fleet_hours (hour);

CREATE TABLE fleet_days (
  organization_id TEXT    NOT NULL,
  day             INTEGER NOT NULL,
  cluster_id      TEXT    NOT NULL,
  node            TEXT    NOT NULL,
  gpu_model       TEXT,
  instance_type   TEXT    NOT NULL,
  capacity_ms     REAL    NOT NULL,
  unavailable_ms  REAL    NOT NULL,
  allocated_ms    REAL    NOT NULL,
  idle_ms         REAL    NOT NULL,
  PRIMARY KEY (organization_id, day, cluster_id, node)
) STRICT, WITHOUT ROWID;
CREATE INDEX fleet_days_by_age ON fleet_days (day);

CREATE TABLE fleet_marks (
  cluster_id TEXT    PRIMARY KEY,
  covered_to INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
`;
