// What every part of the service is started with. Each part's module (src/service/) takes this and
// the parts it depends on, which the composition (start-service.ts) builds first.
import type { Logger } from 'pino';
import type { ServiceMetrics } from '../admin/metrics-registry.js';
import type { Config } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import type { Disposables } from '../runtime/disposables.js';
import type { Delay } from '../runtime/periodic.js';

export interface ServiceContext {
  config: Config;
  clock: Clock;
  /** How every loop waits; tests hold one loop's waits to stall it. */
  delay: Delay;
  logger: Logger;
  metrics: ServiceMetrics;
  /** Where each part registers its undo, in the phase of the stop it belongs to. */
  parts: Disposables;
}
