// The real service started in this process (startService), for the parts of the telemetry benchmark
// that feed its telemetry state directly: no home cluster, an ORG_ADMIN token, its database and token
// file in a temporary folder removed at stop. Logs at `error` only: a thousand exporters failing would
// otherwise print a thousand warnings; failures are counted from the service's metrics instead.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { generateApiToken, hashApiToken } from '../../../src/auth/token-format.js';
import { loadConfig } from '../../../src/config/load.js';
import type { Clock } from '../../../src/domain/clock.js';
import { startService, type RunningService } from '../../../src/service/start-service.js';
import type { GpuTelemetry } from '../../../src/telemetry/gpu-telemetry.js';
import { ORGANIZATION } from './cluster.js';

export interface BenchService {
  service: RunningService;
  telemetry: GpuTelemetry;
  url: string;
  /** Headers of the ORG_ADMIN caller. */
  headers: Record<string, string>;
  stop(): Promise<void>;
}

export async function startBenchService(options: { env: Record<string, string>; clock?: Clock }): Promise<BenchService> {
  const dir = mkdtempSync(join(tmpdir(), 'gpucap-telemetry-bench-'));
  const token = generateApiToken();
  const tokensFile = join(dir, 'tokens.json');
  writeFileSync(tokensFile, JSON.stringify({ tokens: [{ id: 'bench-admin', sha256: hashApiToken(token), organization_id: ORGANIZATION, role: 'ORG_ADMIN' }] }));
  const config = loadConfig({
    GPUCAP_DB_PATH: join(dir, 'index.db'),
    GPUCAP_LISTEN: '127.0.0.1:0',
    GPUCAP_ADMIN_LISTEN: '127.0.0.1:0',
    GPUCAP_API_TOKENS_FILE: tokensFile,
    GPUCAP_RATE_LIMIT_PER_SECOND: '0',
    GPUCAP_AUTH_FAILURE_RATE_PER_SECOND: '0',
    GPUCAP_ADMIN_AUTH: 'none',
    GPUCAP_SHUTDOWN_GRACE_SECONDS: '1',
    GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
    GPUCAP_RETENTION_DAYS: '36500',
    GPUCAP_HOME_CLUSTER_ENABLED: 'false',
    GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
    ...options.env,
  });
  let service: RunningService;
  try {
    service = await startService(config, { logger: pino({ level: 'error' }), ...(options.clock === undefined ? {} : { clock: options.clock }) });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const telemetry = service.telemetry;
  if (telemetry === undefined) {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
    throw new Error('Cannot run the telemetry benchmark: the service started without telemetry (GPUCAP_TELEMETRY_ENABLED is false)');
  }
  return {
    service,
    telemetry,
    url: `http://${service.apiAddress}`,
    headers: { authorization: `Bearer ${token}`, 'x-organization-id': ORGANIZATION },
    async stop() {
      try {
        await service.stop();
        // prom-client's default metrics observe GC through a PerformanceObserver that is never
        // disconnected; it holds the registry, whose collect() closures hold the whole service (rings
        // included). Emptying the registry lets a stopped service be collected before the next part.
        service.metrics.registry.clear();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
