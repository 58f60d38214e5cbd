// A v1.20 API server sends no bookmark to a watch whose resource has not changed since it began, so a
// quiet collection looks like a silent stream: the stall watchdog re-watches it, and that must not
// make the service report a failing source (every 180 s, on every quiet cluster).
import { expect } from 'chai';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { eventually, startReflector } from './reflector-harness.js';

describe('Reflector: a quiet watch the server answered', () => {
  let sim: KubeApi;
  beforeEach(async () => {
    sim = await startKubeApi({ bookmarkIntervalMs: 3_600_000 });
    sim.store.create('pods', { metadata: { name: 'seed', namespace: 'ml' } });
  });
  afterEach(() => sim.close());

  it('is re-watched when silent past the stall limit without being reported as failing, and keeps delivering', async () => {
    const warnings: string[] = [];
    const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (_: object, msg?: string) => void warnings.push(msg ?? '') };
    const { reflector, consumer } = startReflector(sim, { stallTimeoutMs: 300, logger });
    try {
      await eventually(() => expect(reflector.synced).to.equal(true));
      await eventually(() => expect(sim.faults.requestCount('/api/v1/pods', { watch: true })).to.be.at.least(3), 5000);
      const status = reflector.status();
      expect(status.failing).to.equal(false);
      expect(warnings, 'warnings logged').to.deep.equal([]);
      expect(status.lastError?.code).to.equal('KUBE_STALLED');
      expect(status.restarts).to.be.at.least(2);
      expect(status.relists).to.equal(0);
      sim.store.create('pods', { metadata: { name: 'later', namespace: 'ml' } });
      await eventually(() => expect(consumer.objects.has('ml/later')).to.equal(true));
    } finally {
      await reflector.stop();
    }
  });
});
