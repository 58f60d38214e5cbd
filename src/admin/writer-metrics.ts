// Which replica writes which cluster, for Prometheus: this replica's role per cluster (one series per
// cluster it watches), and the writer the database records, so that any replica's scrape says who
// writes. Read at scrape time from the election loops (src/ha/cluster-writers.ts).
import type { Registry } from 'prom-client';
import { counterFrom, gaugeFrom } from './collected-metrics.js';

export interface WriterMetricSource {
  clusterId: string;
  role: 'writer' | 'standby' | 'database-unavailable';
  epoch: number | null;
  takeovers: number;
  holder: { holder: string; epoch: number; heartbeatAgeSeconds: number } | null;
  /** Set while the database refuses this replica the cluster id (another Kubernetes cluster's). */
  identityConflict: object | null;
}

export function registerWriterMetrics(registry: Registry, statuses: () => readonly WriterMetricSource[]): void {
  gaugeFrom(registry, 'gpucap_cluster_writer', '1 when this replica writes the cluster, 0 while it stands by', ['cluster'], () =>
    statuses().map((s) => ({ labels: { cluster: s.clusterId }, value: s.role === 'writer' ? 1 : 0 })),
  );
  gaugeFrom(
    registry,
    'gpucap_cluster_writer_database_unavailable',
    '1 while this replica cannot reach the database to take or keep the cluster\'s write lock',
    ['cluster'],
    () => statuses().map((s) => ({ labels: { cluster: s.clusterId }, value: s.role === 'database-unavailable' ? 1 : 0 })),
  );
  gaugeFrom(
    registry,
    'gpucap_cluster_writer_identity_conflict',
    '1 while the database refuses this replica the cluster id: it records another Kubernetes cluster (kube-system namespace UID) under it',
    ['cluster'],
    () => statuses().map((s) => ({ labels: { cluster: s.clusterId }, value: s.identityConflict === null ? 0 : 1 })),
  );
  counterFrom(registry, 'gpucap_cluster_writer_takeovers_total', 'Times this replica took the cluster\'s write lock', ['cluster'], () =>
    statuses().map((s) => ({ labels: { cluster: s.clusterId }, value: s.takeovers })),
  );
  gaugeFrom(
    registry,
    'gpucap_cluster_writer_epoch',
    'The epoch of the cluster\'s current writer, as the database records it',
    ['cluster', 'holder'],
    () =>
      statuses().flatMap(
        (s) => (s.holder === null ? [] : [{ labels: { cluster: s.clusterId, holder: s.holder.holder }, value: s.holder.epoch }]),
      ),
  );
  gaugeFrom(
    registry,
    'gpucap_cluster_writer_heartbeat_age_seconds',
    'Age of the cluster writer\'s last lease renewal, as the database records it',
    ['cluster', 'holder'],
    () =>
      statuses().flatMap(
        (s) => (s.holder === null
          ? []
          : [{ labels: { cluster: s.clusterId, holder: s.holder.holder }, value: s.holder.heartbeatAgeSeconds }]),
      ),
  );
}
