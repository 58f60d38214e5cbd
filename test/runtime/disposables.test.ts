// The undo list of the service's parts: newest first, one after the other, every step even after one
// failed, and a rejection at the end that names each failure.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Disposables } from '../../src/runtime/disposables.js';

function recordingLogger() {
  const errors: { obj: Record<string, unknown>; msg?: string }[] = [];
  return { errors, error: (obj: object, msg?: string) => void errors.push({ obj: obj as Record<string, unknown>, msg }) };
}

describe('runtime/disposables', () => {
  it('undoes the parts newest first, each after the previous one has settled', async () => {
    const log: string[] = [];
    const parts = new Disposables(recordingLogger());
    parts.add('index', () => void log.push('index'));
    parts.add('loop', async () => {
      await sleep(20);
      log.push('loop');
    });
    parts.add('listener', () => void log.push('listener'));
    expect(parts.names()).to.deep.equal(['listener', 'loop', 'index']);
    await parts.disposeAll();
    expect(log).to.deep.equal(['listener', 'loop', 'index']);
  });

  it('runs every step after one failed, logs each failure with its step, and rejects at the end naming them all', async () => {
    const log: string[] = [];
    const logger = recordingLogger();
    const parts = new Disposables(logger);
    parts.add('index', () => void log.push('index'));
    parts.add('clusters', () => Promise.reject(new Error('watch would not stop')));
    parts.add('sampler', () => {
      throw new Error('sampler broke');
    });
    parts.add('listener', () => void log.push('listener'));

    const error = await parts.disposeAll().then(
      () => expect.fail('disposeAll() resolved although two steps failed'),
      (e: unknown) => e,
    );
    expect(log).to.deep.equal(['listener', 'index']);
    expect(error).to.be.instanceOf(AggregateError);
    expect((error as AggregateError).errors.map((e: Error) => e.message)).to.deep.equal(['sampler broke', 'watch would not stop']);
    expect((error as Error).message).to.equal('2 stop step(s) failed: sampler (sampler broke), clusters (watch would not stop)');
    expect(logger.errors.map((e) => e.obj.step)).to.deep.equal(['sampler', 'clusters']);
  });

  it('runs the steps once: a second call gets the same outcome and undoes nothing again', async () => {
    let runs = 0;
    const parts = new Disposables(recordingLogger());
    parts.add('index', () => void runs++);
    const first = parts.disposeAll();
    const second = parts.disposeAll();
    await Promise.all([first, second]);
    await parts.disposeAll();
    expect(runs).to.equal(1);
  });

  it('refuses a part registered once the undo has begun, so that it cannot outlive it', async () => {
    const parts = new Disposables(recordingLogger());
    await parts.disposeAll();
    expect(() => parts.add('late', () => undefined)).to.throw('Cannot register "late": the service is already being stopped');
  });
});
