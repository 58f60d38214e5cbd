// API priority and fairness answers 429 with Retry-After when the API server is overloaded: a LIST
// must wait at least that long instead of its own (shorter) backoff, or it adds to the overload.
import { expect } from 'chai';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { eventually, startReflector } from './reflector-harness.js';

describe('Reflector: Retry-After on a refused LIST', () => {
  let sim: KubeApi;
  beforeEach(async () => {
    sim = await startKubeApi();
    sim.store.create('pods', { metadata: { name: 'p', namespace: 'ns' } });
  });
  afterEach(() => sim.close());

  it('waits the Retry-After of a 429 (1 s) before listing again, though its backoff is 20 ms', async () => {
    sim.faults.failNext(429, { path: '/api/v1/pods', watch: false });
    const started = Date.now();
    const { reflector } = startReflector(sim);
    try {
      await eventually(() => expect(reflector.synced).to.equal(true), 5000);
      expect(Date.now() - started).to.be.at.least(950);
      expect(sim.faults.requestCount('/api/v1/pods', { watch: false })).to.equal(2);
      expect(reflector.status().lastError).to.include({ statusCode: 429 });
    } finally {
      await reflector.stop();
    }
  });
});
