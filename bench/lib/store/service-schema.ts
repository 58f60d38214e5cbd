// An index brought to the service's schema the way a start of the service brings it: opened through
// the store's public entry point (src/store/backend.ts's openBackend, which migrates as it opens),
// then closed. SQLite: the file created when missing, with the settings the service opens it with;
// PostgreSQL: the schema under its lock, and the partitions of `now`'s month and of those after it.
// On this thread alone (no read or write workers): nothing is read or written through it.
import { openBackend } from '../../../src/store/backend.js';
import type { BackendLocation, BackendOptions } from '../../../src/store/index-backend.js';

const logger: BackendOptions['logger'] = {
  info: () => undefined,
  warn: (fields, message) => console.warn(`index: ${message} ${JSON.stringify(fields)}`),
  error: (fields, message) => console.error(`index: ${message} ${JSON.stringify(fields)}`),
  child: () => logger,
};

export async function migrateToServiceSchema(location: BackendLocation, options: { now: number }): Promise<void> {
  const backend = await openBackend(location, {
    instanceId: 'bench-schema',
    clock: { now: () => options.now },
    readWorkers: 0,
    writeWorker: false,
    poolSize: 1,
    leaseSeconds: 10,
    logger,
    gauge: () => undefined,
  });
  await backend.close();
}
