// Released migrations' SQL never changes: databases already carry it (schema.ts).

// v13: SQLite's migrations/v13-service-secrets.ts, secrets of the service kept in the index, so that
// every replica on this database holds the same ones: today the key of next_token's MAC
// (src/query/cursor.ts). Each row is made once, by the first replica that needs it
// (src/store/postgres/service-secrets.ts). A table of its own that older builds never read: it keeps
// them compatible.
export const V13 = `
CREATE TABLE service_secrets (
  name  text  COLLATE "C" PRIMARY KEY,
  value bytea NOT NULL
);
`;
