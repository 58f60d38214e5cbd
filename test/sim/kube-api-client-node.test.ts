// Smoke test for the runtime/client pairing (DESIGN "Runtime and toolchain"): client-node 2.0.1
// crashes on import under Node 20, so an incompatible upgrade must fail here, loudly and by name.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
import { pod } from './sim-client.js';

type ClientNode = typeof import('@kubernetes/client-node');

function clientVersion(): string {
  const path = createRequire(import.meta.url).resolve('@kubernetes/client-node/package.json');
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}

async function loadClientNode(): Promise<ClientNode> {
  try {
    return await import('@kubernetes/client-node');
  } catch (error) {
    throw new Error(`@kubernetes/client-node ${clientVersion()} cannot load on Node ${process.version}: ${(error as Error).message}`, { cause: error });
  }
}

describe('simulated Kubernetes API: @kubernetes/client-node smoke test', () => {
  let sim: KubeApi;
  beforeEach(async () => {
    sim = await startKubeApi({ bookmarkIntervalMs: 50 });
  });
  afterEach(() => sim.close());

  it('lists pods with CoreV1Api and watches them with Watch through the kubeconfig', async () => {
    const k8s = await loadClientNode();
    sim.store.create('pods', pod('ml', 'listed'));
    const kc = new k8s.KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    const list = await kc.makeApiClient(k8s.CoreV1Api).listPodForAllNamespaces();
    expect(list.items.map((p) => p.metadata?.name)).to.deep.equal(['listed']);
    const resourceVersion = list.metadata?.resourceVersion;
    expect(resourceVersion).to.equal(String(sim.store.resourceVersion));

    const seen: { type: string; name?: string; rv?: string }[] = [];
    const finished = new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (seen.some((e) => e.type === 'ADDED') && seen.some((e) => e.type === 'BOOKMARK')) resolve();
      };
      void new k8s.Watch(kc)
        .watch(
          '/api/v1/pods',
          { allowWatchBookmarks: true, resourceVersion },
          (type, object: { metadata?: { name?: string; resourceVersion?: string } }) => {
            seen.push({ type, name: object.metadata?.name, rv: object.metadata?.resourceVersion });
            check();
          },
          (err: unknown) => reject(new Error(`Watch ended early: ${String(err)}`)),
        )
        .then((controller) => finished.finally(() => controller.abort()), reject);
    });
    const watched = sim.store.create('pods', pod('ml', 'watched'));
    await finished;
    expect(seen[0]).to.deep.equal({ type: 'ADDED', name: 'watched', rv: watched.metadata.resourceVersion });
  });
});
