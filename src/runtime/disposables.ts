// How to undo each part of the service, registered the moment the part starts. A start that fails
// half-way and a stop() run the same list, newest part first, each step after the previous one has
// settled (later parts use earlier ones: the index must outlive the loops that write to it). A step
// that fails never skips the ones after it: it is logged, and the whole run rejects at the end, so
// one broken part cannot leave the index open or the lifetime totals unwritten.

export type Dispose = () => unknown;

export interface DisposeLogger {
  error(obj: object, msg?: string): void;
}

export class Disposables {
  readonly #steps: { name: string; dispose: Dispose }[] = [];
  readonly #logger: DisposeLogger;
  #disposing: Promise<void> | null = null;

  constructor(logger: DisposeLogger) {
    this.#logger = logger;
  }

  /** Registers how to undo a part; it runs before the undo of every part registered earlier. */
  add(name: string, dispose: Dispose): void {
    // A part started after the undo began would outlive it: refuse loudly rather than leak it.
    if (this.#disposing !== null) throw new Error(`Cannot register "${name}": the service is already being stopped`);
    this.#steps.push({ name, dispose });
  }

  /** The registered steps, in the order disposeAll() runs them. */
  names(): string[] {
    return this.#steps.map((step) => step.name).reverse();
  }

  /**
   * Runs every step, newest first. Resolves once all succeeded; otherwise rejects, after the last
   * step, with an AggregateError of every failure. Safe to call twice (the second call gets the
   * same outcome).
   */
  disposeAll(): Promise<void> {
    this.#disposing ??= this.#run();
    return this.#disposing;
  }

  async #run(): Promise<void> {
    const failed: { name: string; error: unknown }[] = [];
    for (const { name, dispose } of this.#steps.splice(0).reverse()) {
      try {
        await dispose();
      } catch (error) {
        failed.push({ name, error });
        this.#logger.error({ err: error, step: name }, 'Stop step failed; going on with the next');
      }
    }
    if (failed.length > 0) {
      throw new AggregateError(
        failed.map((f) => f.error),
        `${failed.length} stop step(s) failed: ` +
          `${failed.map((f) => `${f.name} (${(f.error as Error)?.message ?? String(f.error)})`).join(', ')}`,
      );
    }
  }
}
