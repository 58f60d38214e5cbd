// Released migrations' SQL never changes: databases already carry it (schema.ts).

// v15: SQLite's migrations/v15-capacity-types.ts, how each workload's node and each node of the
// fleet's history was sold (on-demand, spot, reserved), NULL when unknown and for the rows written
// before. Adding a nullable column without a default rewrites nothing (the partitions of workloads
// gain it with their parent), and older builds never name it: their writes leave it NULL and keep
// running, so compatible_since stays.
export const V15 = `
ALTER TABLE workloads ADD COLUMN capacity_type text COLLATE "C";
ALTER TABLE fleet_hours ADD COLUMN capacity_type text COLLATE "C";
ALTER TABLE fleet_days ADD COLUMN capacity_type text COLLATE "C";
`;
