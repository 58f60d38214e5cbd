// The undo list of the service's parts: phase by phase, newest first within a phase, one after the
// other, every step even after one failed, and a rejection at the end that names each failure.
import { setTimeout as delay } from 'node:timers/promises';
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
      await delay(20);
      log.push('loop');
    });
    parts.add('listener', () => void log.push('listener'));
    expect(parts.names()).to.deep.equal(['listener', 'loop', 'index']);
    await parts.disposeAll();
    expect(log).to.deep.equal(['listener', 'loop', 'index']);
  });

  it('undoes phase by phase, newest first within a phase, whatever order the parts started in', async () => {
    const log: string[] = [];
    const parts = new Disposables(recordingLogger());
    const record = (name: string) => () => void log.push(name);
    parts.phase('close').add('index', record('index'));
    parts.phase('flush').add('totals', record('totals'));
    parts.phase('stop sources').add('sampler', record('sampler'));
    parts.phase('drain').add('API listener', record('API listener'));
    parts.phase('stop sources').add('clusters', record('clusters'));
    parts.phase('close').add('admin listener', record('admin listener'));
    parts.add('registry', record('registry'));
    const order = ['API listener', 'clusters', 'sampler', 'totals', 'registry', 'admin listener', 'index'];
    expect(parts.names()).to.deep.equal(order);
    await parts.disposeAll();
    expect(log).to.deep.equal(order);
  });

  it('registers the parts of a phase through add(), so that a subclass wrapping add() sees them', () => {
    const seen: string[] = [];
    class Recording extends Disposables {
      override add(name: string, dispose: () => unknown): void {
        seen.push(name);
        super.add(name, dispose);
      }
    }
    const parts = new Recording(recordingLogger());
    parts.add('index', () => undefined);
    parts.phase('drain').add('API listener', () => undefined);
    expect(seen).to.deep.equal(['index', 'API listener']);
    expect(parts.names()).to.deep.equal(['API listener', 'index']);
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
