// Released migrations' SQL never changes: databases already carry it (schema.ts).

// v14: SQLite's migrations/v14-fleet-history.ts, the fleet's history by node and hour, and by day,
// clustered in the primary key's order (organization, then time) that every read takes, and the
// mark of each cluster's writer. Small tables (a row per node and hour), so not partitioned;
// retention deletes their old rows. Tables of their own that older builds never read: they keep
// them compatible.
export const V14 = `
CREATE TABLE fleet_hours (
  organization_id text   COLLATE "C" NOT NULL,
  hour            bigint NOT NULL,
  cluster_id      text   COLLATE "C" NOT NULL,
  node            text   COLLATE "C" NOT NULL,
  gpu_model       text   COLLATE "C",
  instance_type   text   COLLATE "C" NOT NULL,
  capacity_ms     float8 NOT NULL,
  unavailable_ms  float8 NOT NULL,
  allocated_ms    float8 NOT NULL,
  idle_ms         float8 NOT NULL,
  PRIMARY KEY (organization_id, hour, cluster_id, node)
);
CREATE INDEX fleet_hours_by_age ON fleet_hours (hour);

CREATE TABLE fleet_days (
  organization_id text   COLLATE "C" NOT NULL,
  day             bigint NOT NULL,
  cluster_id      text   COLLATE "C" NOT NULL,
  node            text   COLLATE "C" NOT NULL,
  gpu_model       text   COLLATE "C",
  instance_type   text   COLLATE "C" NOT NULL,
  capacity_ms     float8 NOT NULL,
  unavailable_ms  float8 NOT NULL,
  allocated_ms    float8 NOT NULL,
  idle_ms         float8 NOT NULL,
  PRIMARY KEY (organization_id, day, cluster_id, node)
);
CREATE INDEX fleet_days_by_age ON fleet_days (day);

CREATE TABLE fleet_marks (
  cluster_id text   COLLATE "C" PRIMARY KEY,
  covered_to bigint NOT NULL
);
`;
