// Released migrations' SQL never changes: databases already carry it (schema.ts).

// v4: a team's workloads of one status, in list order. The lists run on generic plans (named
// statements, src/store/reads/workload-index.ts), which must not depend on the values: with a team
// and a status the planner had to pick between the team's index and the status's, and a team's
// pending workloads where the team had none walked the whole team on the generic plan (297 ms against
// 20 ms planned for the values). With this index the pair has one index, as every single filter does,
// and its pages plan once per connection instead of 3.6-4.6 ms per request. SQLite plans each
// statement for its values and does without it. Built under a SHARE lock: writers wait, readers do not.
export const V4 = `
CREATE INDEX workloads_org_initiative_status ON workloads (organization_id, initiative_id, status, submitted_at, workload_id);
`;
