// Schema v15: each workload and each node's row of the fleet's history say how the node was sold
// (src/domain/capacity-type.ts: on-demand, spot or reserved), for GPU pricing. NULL when no label
// said, and for the rows written before: what a node was sold as cannot be known after the fact.
//
// Added with ADD COLUMN, so each is the last column of its table, as on PostgreSQL (whose migration
// test compares the two backends' columns in order); every statement names its columns, none relies
// on their order. No CHECK of the values: a type that a later version adds then needs no rebuild of
// workloads, and the reads take a value they do not know as unknown (rows/row-mapping.ts). Not part
// of fleet_hours' or fleet_days' primary key: a node is one row per hour, its labels the latest.
// Like every migration, this SQL never changes once released.
export const V15 = `
ALTER TABLE workloads ADD COLUMN capacity_type TEXT;
ALTER TABLE fleet_hours ADD COLUMN capacity_type TEXT;
ALTER TABLE fleet_days ADD COLUMN capacity_type TEXT;
`;
