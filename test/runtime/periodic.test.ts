// runPeriodically with a delay the test ends by hand: each step of the loop (wait, run, wait) is
// observed as it happens, with no real or fake timers.
import { expect } from 'chai';
import { runPeriodically, type Periodic } from '../../src/runtime/periodic.js';

/** A delay that resolves when the test says so, or when its signal aborts (as realDelay does). */
class ManualDelay {
  readonly waits: number[] = [];
  #pending: (() => void)[] = [];
  #onWait: (() => void)[] = [];

  readonly delay = (ms: number, signal: AbortSignal): Promise<void> =>
    new Promise<void>((resolve) => {
      this.waits.push(ms);
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
      this.#pending.push(resolve);
      for (const notify of this.#onWait.splice(0)) notify();
    });

  /** Resolves once the loop is waiting: at once if it is, else at its next wait. */
  nextWait(): Promise<void> {
    if (this.#pending.length > 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#onWait.push(resolve));
  }

  /** Ends the current wait. */
  elapse(): void {
    for (const resolve of this.#pending.splice(0)) resolve();
  }

  /** Ends the current wait and resolves once the loop waits again: one run has happened in between. */
  async tick(): Promise<void> {
    this.elapse();
    await this.nextWait();
  }
}

/** A promise the test settles. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('runPeriodically', () => {
  let delay: ManualDelay;
  let periodic: Periodic | undefined;

  beforeEach(() => {
    delay = new ManualDelay();
  });

  afterEach(async () => {
    await periodic?.stop();
    periodic = undefined;
  });

  it('waits one interval before the first run', async () => {
    let runs = 0;
    periodic = runPeriodically(1_000, () => void runs++, { delay: delay.delay, onError: () => undefined });
    await Promise.resolve();
    expect(delay.waits).to.deep.equal([1_000]);
    expect(runs).to.equal(0);
  });

  it('runs once after each interval', async () => {
    let runs = 0;
    periodic = runPeriodically(1_000, () => void runs++, { delay: delay.delay, onError: () => undefined });
    await delay.tick();
    expect(runs).to.equal(1);
    await delay.tick();
    await delay.tick();
    expect(runs).to.equal(3);
    expect(delay.waits).to.deep.equal([1_000, 1_000, 1_000, 1_000]);
  });

  it('waits for an async run to finish before the next interval starts', async () => {
    const run = deferred();
    let started = 0;
    periodic = runPeriodically(500, () => {
      started++;
      return run.promise;
    }, { delay: delay.delay, onError: () => undefined });
    await delay.nextWait();
    delay.elapse();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).to.equal(1);
    expect(delay.waits).to.have.length(1);
    run.resolve();
    await delay.nextWait();
    expect(delay.waits).to.have.length(2);
  });

  it('reports a run that throws to onError and keeps running', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    periodic = runPeriodically(
      1_000,
      () => {
        runs++;
        if (runs === 1) throw new Error('flush failed: SQLITE_BUSY');
      },
      { delay: delay.delay, onError: (error) => errors.push(error) },
    );
    await delay.tick();
    await delay.tick();
    expect(runs).to.equal(2);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.be.an('error').with.property('message', 'flush failed: SQLITE_BUSY');
  });

  it('reports a run that rejects to onError and keeps running', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    periodic = runPeriodically(
      1_000,
      async () => {
        runs++;
        throw new Error(`scan ${runs} failed`);
      },
      { delay: delay.delay, onError: (error) => errors.push(error) },
    );
    await delay.tick();
    await delay.tick();
    expect(errors.map((error) => (error as Error).message)).to.deep.equal(['scan 1 failed', 'scan 2 failed']);
  });

  it('stop() ends the wait at once and no run follows', async () => {
    let runs = 0;
    periodic = runPeriodically(60_000, () => void runs++, { delay: delay.delay, onError: () => undefined });
    await delay.nextWait();
    await periodic.stop();
    expect(runs).to.equal(0);
    expect(delay.waits).to.have.length(1);
  });

  it('stop() resolves only after the run in progress finishes, and no run starts after it', async () => {
    const run = deferred();
    let started = 0;
    let finished = 0;
    periodic = runPeriodically(1_000, async () => {
      started++;
      await run.promise;
      finished++;
    }, { delay: delay.delay, onError: () => undefined });
    await delay.nextWait();
    delay.elapse();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).to.equal(1);

    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).to.equal(false);

    run.resolve();
    await stopping;
    expect(finished).to.equal(1);
    expect(started).to.equal(1);
    expect(delay.waits).to.have.length(1);
  });
});
