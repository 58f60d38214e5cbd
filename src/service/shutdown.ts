// How the service stops: out of the load balancer's endpoints first, then every part undone, phase
// by phase (runtime/disposables.ts: drain, stop sources, flush, close).
import type { Logger } from 'pino';
import type { ReadinessTracker } from '../admin/readiness.js';
import type { Config } from '../config/schema.js';
import type { Disposables } from '../runtime/disposables.js';

/** The service's stop(): runs once, and every call gets the same outcome. */
export function shutdownOnce(
  config: Config,
  deps: { readiness: ReadinessTracker; parts: Disposables; logger: Logger },
): () => Promise<void> {
  const { readiness, parts, logger } = deps;
  let stopping: Promise<void> | null = null;
  return () =>
    (stopping ??= (async () => {
      readiness.beginShutdown();
      logger.info({ delaySeconds: config.shutdown_delay_seconds, graceSeconds: config.shutdown_grace_seconds }, 'shutting down');
      // Endpoint removal lags SIGTERM by seconds: keep answering what still arrives until it is done.
      await new Promise((resolve) => setTimeout(resolve, config.shutdown_delay_seconds * 1000));
      logger.info('draining requests');
      try {
        await parts.disposeAll();
      } catch (error) {
        logger.error({ err: error }, 'stopped, but not cleanly: see the failed steps above');
        throw error;
      }
      logger.info('stopped');
    })());
}
