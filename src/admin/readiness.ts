// Named conditions that must all hold before the service is ready (index open, every informer synced
// once), and sources that are currently failing (degraded). A condition that cannot be met for a reason
// outside the service (a remote cluster that is down) can be waived: it stops holding readiness back
// and stays visible as a failure. Changes are logged once, when they happen.
import type { Logger } from 'pino';

interface Condition {
  ready: boolean;
  failure: string | null;
  /** Not ready, but no longer awaited (see waive()). */
  waived: boolean;
}

export interface ReadinessReport {
  ready: boolean;
  degraded: boolean;
  shuttingDown: boolean;
  conditions: Record<string, { ready: boolean; failure: string | null; waived: boolean }>;
}

export class ReadinessTracker {
  private readonly conditions = new Map<string, Condition>();
  private shuttingDown = false;
  private lastReady = false;

  constructor(private readonly logger: Logger) {}

  /** Declare a condition that starts not ready; readiness waits for it. */
  require(name: string): void {
    if (!this.conditions.has(name)) this.conditions.set(name, { ready: false, failure: null, waived: false });
    this.logChange();
  }

  markReady(name: string): void {
    const condition = this.condition(name);
    condition.ready = true;
    condition.waived = false;
    this.logChange();
  }

  /** Stop waiting for a condition that is not met (its source is unreachable); markReady() still ends it. */
  waive(name: string): void {
    const condition = this.condition(name);
    if (condition.ready || condition.waived) return;
    condition.waived = true;
    this.logger.warn({ condition: name, failure: condition.failure }, 'no longer waiting for an unreachable source');
    this.logChange();
  }

  has(name: string): boolean {
    return this.conditions.has(name);
  }

  names(): string[] {
    return [...this.conditions.keys()];
  }

  /** A source failing (null: recovered). It keeps its readiness: stale data is served, marked degraded. */
  setFailure(name: string, failure: string | null): void {
    const condition = this.condition(name);
    if (condition.failure === failure) return;
    if (failure) this.logger.warn({ condition: name, failure }, 'source degraded');
    else this.logger.info({ condition: name }, 'source recovered');
    condition.failure = failure;
  }

  forget(name: string): void {
    this.conditions.delete(name);
    this.logChange();
  }

  /** On SIGTERM: probes fail so traffic moves elsewhere, while requests that still arrive are served. */
  beginShutdown(): void {
    this.shuttingDown = true;
    this.logChange();
  }

  /** The index holds a complete picture (every condition met once); the API answers only then. */
  isReady(): boolean {
    for (const c of this.conditions.values()) if (!c.ready && !c.waived) return false;
    return true;
  }

  /** What /readyz reports: ready and not shutting down. */
  acceptsTraffic(): boolean {
    return !this.shuttingDown && this.isReady();
  }

  degraded(): boolean {
    for (const c of this.conditions.values()) if (c.failure !== null) return true;
    return false;
  }

  report(): ReadinessReport {
    return {
      ready: this.acceptsTraffic(),
      degraded: this.degraded(),
      shuttingDown: this.shuttingDown,
      conditions: Object.fromEntries(this.conditions),
    };
  }

  private condition(name: string): Condition {
    let condition = this.conditions.get(name);
    if (!condition) {
      condition = { ready: false, failure: null, waived: false };
      this.conditions.set(name, condition);
    }
    return condition;
  }

  private logChange(): void {
    const ready = this.acceptsTraffic();
    if (ready === this.lastReady) return;
    this.lastReady = ready;
    this.logger.info(
      { ready, waiting: [...this.conditions].filter(([, c]) => !c.ready && !c.waived).map(([n]) => n) },
      ready ? 'service ready' : 'service not ready',
    );
  }
}
