// Schema v13: secrets of the service kept in the index itself, so that whatever opens this file next
// (the pod after a restart) holds the same ones: today the key of next_token's MAC
// (src/query/cursor.ts). Each row is made once, by the first process that needs it
// (src/store/sqlite/service-secrets.ts); `gpucap migrate` copies none, so a PostgreSQL index makes
// its own. Like every migration, this SQL never changes once released.
export const V13 = `
CREATE TABLE service_secrets (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
) STRICT, WITHOUT ROWID;
`;
