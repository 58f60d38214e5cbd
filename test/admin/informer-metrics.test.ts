// The informer and indexer series on /metrics, read from the statuses at scrape time: each test
// scrapes a fresh registry and reads the series an operator's dashboard would.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { registerInformerMetrics } from '../../src/admin/informer-metrics.js';
import type { IndexerCounters } from '../../src/domain/cluster-status.js';
import type { ClusterConfigProblem, ClusterStatus, InformerStatus, WatchedResource } from '../../src/domain/cluster-status.js';

function anInformer(resource: WatchedResource, overrides: Partial<InformerStatus> = {}): InformerStatus {
  return { resource, synced: true, failing: false, relists: 0, restarts: 0, events: { added: 0, modified: 0, deleted: 0 }, started: true, ...overrides };
}

function aCluster(clusterId: string, informers: InformerStatus[]): ClusterStatus {
  return { clusterId, origin: `/etc/clusters/${clusterId}.kubeconfig`, since: 0, informers };
}

function anIndexer(clusterId: string, overrides: Partial<IndexerCounters> = {}): IndexerCounters {
  return { clusterId, events: 0, rowsWritten: 0, intervalsWritten: 0, cancelledByReconcile: 0, flushErrors: 0, pending: 0, ...overrides };
}

type Series = { labels: Record<string, string | number | undefined>; value: number }[];

describe('registerInformerMetrics', () => {
  let registry: Registry;
  let clusters: ClusterStatus[];
  let problems: ClusterConfigProblem[];
  let indexers: IndexerCounters[];

  beforeEach(() => {
    registry = new Registry();
    clusters = [];
    problems = [];
    indexers = [];
    registerInformerMetrics(registry, { clusters: () => clusters, problems: () => problems, indexers: () => indexers });
  });

  /** One scrape: the samples of `name`, as label sets and values. */
  async function scrape(name: string): Promise<Series> {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    if (metric === undefined) throw new Error(`No metric "${name}" registered`);
    return metric.values.map(({ labels, value }) => ({ labels: { ...labels }, value }));
  }

  it('counts watch events by cluster, resource, namespace and type', async () => {
    clusters = [aCluster('gpu-west', [anInformer('pods', { namespace: 'research', events: { added: 7, modified: 12, deleted: 2 } })])];
    expect(await scrape('gpucap_informer_events_total')).to.deep.equal([
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: 'research', type: 'ADDED' }, value: 7 },
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: 'research', type: 'MODIFIED' }, value: 12 },
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: 'research', type: 'DELETED' }, value: 2 },
    ]);
  });

  it('labels an informer watching every namespace with an empty namespace', async () => {
    clusters = [aCluster('gpu-west', [anInformer('nodes', { relists: 1 })])];
    expect(await scrape('gpucap_informer_relists_total')).to.deep.equal([{ labels: { cluster: 'gpu-west', resource: 'nodes', namespace: '' }, value: 1 }]);
  });

  it('reports relists and restarts per informer', async () => {
    clusters = [aCluster('gpu-west', [anInformer('pods', { relists: 2, restarts: 5 }), anInformer('jobs', { relists: 0, restarts: 1 })])];
    expect(await scrape('gpucap_informer_relists_total')).to.deep.equal([
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: '' }, value: 2 },
      { labels: { cluster: 'gpu-west', resource: 'jobs', namespace: '' }, value: 0 },
    ]);
    expect(await scrape('gpucap_informer_restarts_total')).to.deep.equal([
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: '' }, value: 5 },
      { labels: { cluster: 'gpu-west', resource: 'jobs', namespace: '' }, value: 1 },
    ]);
  });

  it('shows the counts of the latest status at each scrape, not a sum of scrapes', async () => {
    clusters = [aCluster('gpu-west', [anInformer('pods', { restarts: 3 })])];
    await scrape('gpucap_informer_restarts_total');
    clusters = [aCluster('gpu-west', [anInformer('pods', { restarts: 4 })])];
    expect((await scrape('gpucap_informer_restarts_total')).map((s) => s.value)).to.deep.equal([4]);
  });

  it('reports synced and failing as 1 or 0', async () => {
    clusters = [aCluster('gpu-west', [anInformer('namespaces'), anInformer('pods', { synced: false, failing: true })])];
    expect(await scrape('gpucap_informer_synced')).to.deep.equal([
      { labels: { cluster: 'gpu-west', resource: 'namespaces', namespace: '' }, value: 1 },
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: '' }, value: 0 },
    ]);
    expect(await scrape('gpucap_informer_failing')).to.deep.equal([
      { labels: { cluster: 'gpu-west', resource: 'namespaces', namespace: '' }, value: 0 },
      { labels: { cluster: 'gpu-west', resource: 'pods', namespace: '' }, value: 1 },
    ]);
  });

  it('reports the watch age in seconds only for informers with an open watch', async () => {
    clusters = [aCluster('gpu-west', [anInformer('pods', { watchAgeMs: 90_500 }), anInformer('jobs', { watchAgeMs: undefined })])];
    expect(await scrape('gpucap_informer_watch_age_seconds')).to.deep.equal([{ labels: { cluster: 'gpu-west', resource: 'pods', namespace: '' }, value: 90.5 }]);
  });

  it('drops the watch age of an informer whose watch closed since the last scrape', async () => {
    clusters = [aCluster('gpu-west', [anInformer('pods', { watchAgeMs: 1_000 })])];
    await scrape('gpucap_informer_watch_age_seconds');
    clusters = [aCluster('gpu-west', [anInformer('pods', { watchAgeMs: undefined, failing: true })])];
    expect(await scrape('gpucap_informer_watch_age_seconds')).to.deep.equal([]);
  });

  it('says a cluster is up only when every informer has synced and none is failing', async () => {
    clusters = [
      aCluster('gpu-west', [anInformer('namespaces'), anInformer('pods')]),
      aCluster('gpu-syncing', [anInformer('namespaces'), anInformer('pods', { synced: false })]),
      aCluster('gpu-failing', [anInformer('namespaces', { failing: true }), anInformer('pods')]),
    ];
    expect(await scrape('gpucap_cluster_up')).to.deep.equal([
      { labels: { cluster: 'gpu-west' }, value: 1 },
      { labels: { cluster: 'gpu-syncing' }, value: 0 },
      { labels: { cluster: 'gpu-failing' }, value: 0 },
    ]);
  });

  it('reports each rejected remote kubeconfig, and the folder, by file', async () => {
    problems = [
      { file: 'README', message: 'Kubeconfig "/etc/clusters/README" has no current-context' },
      { file: '/etc/clusters', message: 'Cannot read remote kubeconfig folder "/etc/clusters": ENOENT' },
    ];
    expect(await scrape('gpucap_remote_kubeconfig_invalid')).to.deep.equal([
      { labels: { file: 'README' }, value: 1 },
      { labels: { file: '/etc/clusters' }, value: 1 },
    ]);
  });

  it('drops a remote kubeconfig from the invalid series once it is fixed', async () => {
    problems = [{ file: 'README', message: 'Kubeconfig "/etc/clusters/README" has no current-context' }];
    await scrape('gpucap_remote_kubeconfig_invalid');
    problems = [];
    expect(await scrape('gpucap_remote_kubeconfig_invalid')).to.deep.equal([]);
  });

  it('reports the indexer counters of each cluster', async () => {
    indexers = [anIndexer('gpu-west', { events: 120, rowsWritten: 40, intervalsWritten: 33, cancelledByReconcile: 2, flushErrors: 1, pending: 6 }), anIndexer('gpu-east', { events: 5 })];
    const expected: [string, number, number][] = [
      ['gpucap_indexer_events_total', 120, 5],
      ['gpucap_indexer_rows_written_total', 40, 0],
      ['gpucap_indexer_intervals_written_total', 33, 0],
      ['gpucap_indexer_reconcile_cancelled_total', 2, 0],
      ['gpucap_indexer_flush_errors_total', 1, 0],
      ['gpucap_indexer_pending', 6, 0],
    ];
    for (const [name, west, east] of expected) {
      expect(await scrape(name), name).to.deep.equal([
        { labels: { cluster: 'gpu-west' }, value: west },
        { labels: { cluster: 'gpu-east' }, value: east },
      ]);
    }
  });

  it('drops every series of a cluster removed from the sources at the next scrape', async () => {
    clusters = [
      aCluster('gpu-west', [anInformer('pods', { watchAgeMs: 5_000, events: { added: 1, modified: 0, deleted: 0 } })]),
      aCluster('gpu-old', [anInformer('pods', { watchAgeMs: 5_000, events: { added: 9, modified: 0, deleted: 0 } })]),
    ];
    indexers = [anIndexer('gpu-west'), anIndexer('gpu-old')];
    expect(await registry.metrics()).to.include('cluster="gpu-old"');
    clusters = clusters.filter((c) => c.clusterId !== 'gpu-old');
    indexers = indexers.filter((c) => c.clusterId !== 'gpu-old');
    const text = await registry.metrics();
    expect(text).to.not.include('gpu-old');
    expect(text).to.match(/^gpucap_informer_events_total\{cluster="gpu-west",resource="pods",namespace="",type="ADDED"\} 1$/m);
    expect(text).to.match(/^gpucap_cluster_up\{cluster="gpu-west"\} 1$/m);
  });

  it('exposes the series with their Prometheus types', async () => {
    const types = Object.fromEntries((await registry.getMetricsAsJSON()).map((m) => [m.name, m.type]));
    expect(types).to.deep.equal({
      gpucap_informer_events_total: 'counter',
      gpucap_informer_relists_total: 'counter',
      gpucap_informer_restarts_total: 'counter',
      gpucap_informer_synced: 'gauge',
      gpucap_informer_failing: 'gauge',
      gpucap_informer_watch_age_seconds: 'gauge',
      gpucap_cluster_up: 'gauge',
      gpucap_remote_kubeconfig_invalid: 'gauge',
      gpucap_indexer_events_total: 'counter',
      gpucap_indexer_rows_written_total: 'counter',
      gpucap_indexer_intervals_written_total: 'counter',
      gpucap_indexer_reconcile_cancelled_total: 'counter',
      gpucap_indexer_flush_errors_total: 'counter',
      gpucap_indexer_pending: 'gauge',
    });
  });
});
