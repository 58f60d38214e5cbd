// `gpucap migrate --verify`: the checks of verify-index.ts alone, on a copy already made. It writes
// nothing to the target (no schema migration, no lock), and reads the source from a fresh snapshot,
// removed afterwards, or from the file itself.
import { connectMaintenance, type ConnectionLogger } from '../../store/postgres/connection.js';
import { schemaVersion } from '../../store/postgres/migrations/migrate.js';
import { TransferRefused } from './errors.js';
import { prepareSource } from './prepare-source.js';
import { VERIFY_SNAPSHOT_FILE } from './snapshot.js';
import { verifyIndex, type Verification } from './verify-index.js';

export interface CheckIndexOptions {
  from: string;
  to: string;
  snapshotDir: string | null;
  clock: { now(): number };
  print: (line: string) => void;
  logger: ConnectionLogger;
}

export async function checkIndex(options: CheckIndexOptions): Promise<Verification> {
  const client = await connectMaintenance(options.to, { instanceId: 'migrate', logger: options.logger });
  try {
    if ((await schemaVersion(client)).version === 0) {
      throw new TransferRefused('The target database has no gpucap tables: nothing was migrated into it yet');
    }
    const source = prepareSource({
      from: options.from,
      snapshotDir: options.snapshotDir,
      snapshotFile: VERIFY_SNAPSHOT_FILE,
      reuse: () => false,
      clock: options.clock,
      print: options.print,
    });
    try {
      options.print('verify: comparing the source and the target');
      return await verifyIndex(source.index, client, { at: options.clock.now(), clusters: source.state.clusters });
    } finally {
      source.close({ keepSnapshot: false });
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
