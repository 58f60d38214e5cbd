// The write lock of an SQLite index: granted at once, never lost. One pod is the only process that
// writes its file (the chart refuses more replicas without a shared database), so every cluster it
// watches is its to write. The same election code runs as on PostgreSQL, and /readyz and /metrics
// report the writers the same way. The fleet identity check (a cluster id refused to a replica of
// another Kubernetes cluster, src/store/postgres/lease.ts) does not apply: it guards a database that
// releases in several clusters share, and an SQLite file has one writer, which watches each cluster
// id of its own configuration (home and remote ids are unique there). acquire() ignores the identity.
import type { ClusterWrites } from '../ports.js';

interface Holder {
  epoch: number;
  snapshotWritten: boolean;
}

export class SqliteLeases {
  readonly #store: ClusterWrites;
  readonly #instanceId: string;
  readonly #holders = new Map<string, Holder>();

  constructor(store: ClusterWrites, instanceId: string) {
    this.#store = store;
    this.#instanceId = instanceId;
  }

  lease(clusterId: string) {
    return { acquire: async () => this.#session(clusterId) };
  }

  async holders() {
    return [...this.#holders].map(([clusterId, holder]) => ({
      clusterId, holder: this.#instanceId, epoch: holder.epoch, heartbeatAgeSeconds: 0, snapshotWritten: holder.snapshotWritten,
    }));
  }

  #session(clusterId: string) {
    const store = this.#store;
    const holder: Holder = { epoch: (this.#holders.get(clusterId)?.epoch ?? 0) + 1, snapshotWritten: false };
    this.#holders.set(clusterId, holder);
    return {
      epoch: holder.epoch,
      lost: new Promise<Error>(() => undefined),
      heartbeat: async () => undefined,
      markSnapshotWritten: async () => {
        holder.snapshotWritten = true;
      },
      release: async () => {
        if (this.#holders.get(clusterId) === holder) this.#holders.delete(clusterId);
      },
      ...store,
    };
  }
}
