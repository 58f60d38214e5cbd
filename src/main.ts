// The process: loads the configuration, starts the service (src/service/start-service.ts) and stops it
// on SIGTERM or SIGINT, draining and closing cleanly. Exit codes: 0 stopped cleanly, 1 failed to start
// or to stop, 2 a configuration that cannot be used.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from './config/load.js';
import type { Config } from './config/schema.js';
import { startService, type RunningService } from './service/start-service.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  let service: RunningService;
  try {
    service = await startService(config);
  } catch (error) {
    // A kubeconfig that cannot be used is a configuration problem: same exit code as a bad setting.
    if ((error as { code?: unknown }).code === 'KUBECONFIG_INVALID') {
      console.error((error as Error).message);
      process.exit(2);
    }
    throw error;
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error('Shutdown failed', error);
          process.exit(1);
        },
      );
    });
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) {
  main().catch((error: unknown) => {
    console.error(`gpu-capacity-api failed to start: ${(error as Error).message}`);
    process.exit(1);
  });
}
