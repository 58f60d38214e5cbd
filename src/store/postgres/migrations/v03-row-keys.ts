// Released migrations' SQL never changes: databases already carry it (schema.ts).

// v3: where each workload and pod lives. A row's month is not in its id, so without these a lookup by
// id probes the primary key of every monthly partition (18 at 400 days): 67 % of the writer's
// statement time, docs/performance.md. One primary-key probe here names the one partition to read.
// Statement triggers on the partitioned parents keep them exact whoever writes (the writer, retention,
// `gpucap migrate`, an older build during a rolling upgrade), from the rows each statement inserted or
// deleted, once per statement rather than per row. A dropped month would fire no trigger: whatever
// drops one must delete its keys itself.
//
// The writers keep one row per id (they look the id up before inserting), so a key names the one
// month of its row; the newest insert of an id wins, and a delete removes a key only if it still
// names the deleted row's month. A key left behind names a month without the row: a lookup finds
// nothing there, as for a new id. A pod that moves to another workload's month is deleted and
// inserted again, so its key follows it. submitted_at never changes in place (it is the partition
// key, and a row moved between partitions by UPDATE would fire neither trigger): such an UPDATE is
// refused.
/** A key table (id -> submitted_at) of one partitioned table, and the functions that keep it. */
function keyTable(keys: string, id: string, source: string): string {
  return `
CREATE TABLE ${keys} (
  ${id.padEnd(12)} text   COLLATE "C" PRIMARY KEY,
  submitted_at bigint NOT NULL
);
CREATE INDEX ${keys}_month ON ${keys} (submitted_at);

CREATE FUNCTION ${keys}_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ${keys} (${id}, submitted_at) SELECT ${id}, submitted_at FROM added
  ON CONFLICT (${id}) DO UPDATE SET submitted_at = excluded.submitted_at;
  RETURN NULL;
END $$;
CREATE FUNCTION ${keys}_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ${keys} k USING removed r WHERE k.${id} = r.${id} AND k.submitted_at = r.submitted_at;
  RETURN NULL;
END $$;

CREATE TRIGGER ${source}_keys_add AFTER INSERT ON ${source} REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION ${keys}_add();
CREATE TRIGGER ${source}_keys_remove AFTER DELETE ON ${source} REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION ${keys}_remove();
CREATE TRIGGER ${source}_submitted_at_unchanged BEFORE UPDATE OF submitted_at ON ${source}
  FOR EACH ROW EXECUTE FUNCTION submitted_at_unchanged();

INSERT INTO ${keys} (${id}, submitted_at) SELECT ${id}, submitted_at FROM ${source} ON CONFLICT DO NOTHING;
-- Statistics from the start: lookups by key are planned as index probes, not as scans.
ANALYZE ${keys};
`;
}

/** The refusal of submitted_at_unchanged(), a SQL string literal with RAISE's placeholders. */
const MOVE_REFUSED =
  "'Cannot move % from submitted_at % to %: submitted_at is the partition key and never changes (delete the row and insert it again)'";

export const V3 = `
-- Writers wait from here to the commit (readers do not): a row written between the copy below and
-- the triggers would have no key.
LOCK TABLE workloads, workload_pods IN SHARE ROW EXCLUSIVE MODE;

CREATE FUNCTION submitted_at_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.submitted_at IS DISTINCT FROM OLD.submitted_at THEN
    RAISE EXCEPTION ${MOVE_REFUSED},
      TG_TABLE_NAME, OLD.submitted_at, NEW.submitted_at;
  END IF;
  RETURN NEW;
END $$;
${keyTable('workload_keys', 'workload_id', 'workloads')}${keyTable('pod_keys', 'pod_uid', 'workload_pods')}`;
