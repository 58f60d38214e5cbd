// How to undo each part of the service, registered the moment the part starts. A start that fails
// half-way and a stop() run the same list, phase by phase (STOP_PHASES), and within a phase newest
// part first, each step after the previous one has settled (later parts use earlier ones: the index
// must outlive the loops that write to it). A step that fails never skips the ones after it: it is
// logged, and the whole run rejects at the end, so one broken part cannot leave the index open or the
// lifetime totals unwritten.

export type Dispose = () => unknown;

/**
 * The phases of a stop, in the order they run. 'drain': the API stops taking requests and answers
 * those under way. 'stop sources': nothing new comes in (informers, watches, the sampler, the loops).
 * 'flush': what is still held in memory is written. 'close': what every other part used (the admin
 * port, the index, the metrics registry), so that /readyz and /metrics answer through the whole stop.
 * A part registers into the phase its undo belongs to, whenever it starts: the order of the start
 * follows what depends on what, the order of the stop follows the phases.
 */
export const STOP_PHASES = ['drain', 'stop sources', 'flush', 'close'] as const;
export type StopPhase = (typeof STOP_PHASES)[number];

/** Registers parts into one phase of the stop. */
export interface PhaseParts {
  add(name: string, dispose: Dispose): void;
}

export interface DisposeLogger {
  error(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
}

/** A stop step slower than this is logged by name, so that a stop that outlasts its grace period says why. */
const SLOW_STEP_MS = 1_000;

// A part registered with add() alone is undone with the last phase.
const DEFAULT_PHASE: StopPhase = 'close';

export class Disposables {
  readonly #steps: { name: string; dispose: Dispose; phase: StopPhase }[] = [];
  readonly #logger: DisposeLogger;
  #registering: StopPhase = DEFAULT_PHASE;
  #disposing: Promise<void> | null = null;

  constructor(logger: DisposeLogger) {
    this.#logger = logger;
  }

  /** Where parts register their undo so that it runs in `phase` of the stop. */
  phase(phase: StopPhase): PhaseParts {
    return {
      add: (name, dispose) => {
        // Every registration goes through add(), which a subclass may wrap (the lifecycle tests inject
        // faults there), so the phase travels beside the call instead of as an argument of it.
        this.#registering = phase;
        try {
          this.add(name, dispose);
        } finally {
          this.#registering = DEFAULT_PHASE;
        }
      },
    };
  }

  /**
   * Registers how to undo a part, in the phase phase() was asked for (else the last one); it runs
   * before the undo of every part registered earlier in that phase.
   */
  add(name: string, dispose: Dispose): void {
    // A part started after the undo began would outlive it: refuse loudly rather than leak it.
    if (this.#disposing !== null) throw new Error(`Cannot register "${name}": the service is already being stopped`);
    this.#steps.push({ name, dispose, phase: this.#registering });
  }

  /** The registered steps, in the order disposeAll() runs them. */
  names(): string[] {
    return this.#inStopOrder().map((step) => step.name);
  }

  /**
   * Runs every step, phase by phase, newest first within each. Resolves once all succeeded;
   * otherwise rejects, after the last step, with an AggregateError of every failure. Safe to call
   * twice (the second call gets the same outcome).
   */
  disposeAll(): Promise<void> {
    this.#disposing ??= this.#run();
    return this.#disposing;
  }

  #inStopOrder(): { name: string; dispose: Dispose }[] {
    return STOP_PHASES.flatMap((phase) => this.#steps.filter((step) => step.phase === phase).reverse());
  }

  async #run(): Promise<void> {
    const steps = this.#inStopOrder();
    this.#steps.splice(0);
    const failed: { name: string; error: unknown }[] = [];
    for (const { name, dispose } of steps) {
      const started = performance.now();
      try {
        await dispose();
        const tookMs = Math.round(performance.now() - started);
        if (tookMs > SLOW_STEP_MS) this.#logger.warn?.({ step: name, tookMs }, 'Stop step was slow');
      } catch (error) {
        failed.push({ name, error });
        this.#logger.error({ err: error, step: name }, 'Stop step failed; going on with the next');
      }
    }
    if (failed.length > 0) {
      const named = failed.map((f) => `${f.name} (${(f.error as Error)?.message ?? String(f.error)})`);
      throw new AggregateError(
        failed.map((f) => f.error),
        `${failed.length} stop step(s) failed: ${named.join(', ')}`,
      );
    }
  }
}
