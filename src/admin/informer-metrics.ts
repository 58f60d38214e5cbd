// Prometheus series for the informers and the indexer, read from their status at scrape time: the
// reflectors already count events, relists and restarts, so nothing on the event path touches
// prom-client, and a cluster removed at runtime simply disappears from the next scrape.
import type { Registry } from 'prom-client';
import { counterFrom, gaugeFrom, type Labels, type Sample } from './collected-metrics.js';
import type { ClusterConfigProblem, ClusterStatus, IndexerCounters } from '../domain/cluster-status.js';

export interface InformerMetricSources {
  clusters: () => readonly ClusterStatus[];
  problems: () => readonly ClusterConfigProblem[];
  indexers: () => readonly IndexerCounters[];
}

export function registerInformerMetrics(registry: Registry, sources: InformerMetricSources): void {
  registerInformerSeries(registry, sources);
  registerIndexerSeries(registry, sources.indexers);
}

function registerInformerSeries(registry: Registry, sources: InformerMetricSources): void {
  const informers = (): { labels: Labels; informer: ClusterStatus['informers'][number] }[] =>
    sources.clusters().flatMap((cluster) =>
      cluster.informers.map((informer) => ({
        labels: { cluster: cluster.clusterId, resource: informer.resource, namespace: informer.namespace ?? '' },
        informer,
      })),
    );
  const LABELS = ['cluster', 'resource', 'namespace'];

  counterFrom(registry, 'gpucap_informer_events_total', 'Watch events delivered, by cluster, resource and type', [...LABELS, 'type'], () =>
    informers().flatMap(({ labels, informer }) => [
      { labels: { ...labels, type: 'ADDED' }, value: informer.events.added },
      { labels: { ...labels, type: 'MODIFIED' }, value: informer.events.modified },
      { labels: { ...labels, type: 'DELETED' }, value: informer.events.deleted },
    ]),
  );
  counterFrom(registry, 'gpucap_informer_relists_total', 'LISTs after the first (410 Gone, failed watch resumption)', LABELS, () =>
    informers().map(({ labels, informer }) => ({ labels, value: informer.relists })),
  );
  counterFrom(
    registry,
    'gpucap_informer_restarts_total',
    'Watches that ended, failed, stalled or expired, and LISTs that failed',
    LABELS,
    () => informers().map(({ labels, informer }) => ({ labels, value: informer.restarts })),
  );
  gaugeFrom(registry, 'gpucap_informer_synced', '1 once the informer delivered its first LIST', LABELS, () =>
    informers().map(({ labels, informer }) => ({ labels, value: informer.synced ? 1 : 0 })),
  );
  gaugeFrom(registry, 'gpucap_informer_failing', '1 while the informer\'s last LIST or WATCH attempt failed', LABELS, () =>
    informers().map(({ labels, informer }) => ({ labels, value: informer.failing ? 1 : 0 })),
  );
  gaugeFrom(registry, 'gpucap_informer_watch_age_seconds', 'Age of the open watch stream (absent while none is open)', LABELS, () =>
    informers().flatMap(({ labels, informer }) =>
      informer.watchAgeMs === undefined ? [] : [{ labels, value: informer.watchAgeMs / 1000 }],
    ),
  );
  gaugeFrom(registry, 'gpucap_cluster_up', '1 when every informer of the cluster has synced and none is failing', ['cluster'], () =>
    sources.clusters().map((cluster) => ({
      labels: { cluster: cluster.clusterId },
      value: cluster.informers.every((i) => i.synced && !i.failing) ? 1 : 0,
    })),
  );
  gaugeFrom(
    registry,
    'gpucap_remote_kubeconfig_invalid',
    '1 for each remote kubeconfig file (or the folder) that could not be used',
    ['file'],
    () => sources.problems().map((problem) => ({ labels: { file: problem.file }, value: 1 })),
  );
}

/** The indexer's counters by cluster: name, help, and the counter read. */
const INDEXER_COUNTERS: readonly [string, string, (counters: IndexerCounters) => number][] = [
  ['gpucap_indexer_events_total', 'Events handled by the workload indexer (a relist counts once)', (c) => c.events],
  ['gpucap_indexer_rows_written_total', 'Workload rows the indexer changed in the index', (c) => c.rowsWritten],
  ['gpucap_indexer_intervals_written_total', 'Pod GPU intervals the indexer changed in the index', (c) => c.intervalsWritten],
  [
    'gpucap_indexer_reconcile_cancelled_total',
    'Unfinished workloads found missing after a relist and made cancelled',
    (c) => c.cancelledByReconcile,
  ],
  ['gpucap_indexer_flush_errors_total', 'Index writes that failed (retried at the next flush)', (c) => c.flushErrors],
];

function registerIndexerSeries(registry: Registry, counters: () => readonly IndexerCounters[]): void {
  const indexers = (read: (counters: IndexerCounters) => number): Sample[] =>
    counters().map((each) => ({ labels: { cluster: each.clusterId }, value: read(each) }));
  for (const [name, help, read] of INDEXER_COUNTERS) counterFrom(registry, name, help, ['cluster'], () => indexers(read));
  gaugeFrom(
    registry,
    'gpucap_indexer_pending',
    'Rows and intervals waiting for the next index write',
    ['cluster'],
    () => indexers((c) => c.pending),
  );
}
