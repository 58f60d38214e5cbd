// Fault test on real processes: two releases configured with one cluster id but watching two
// different Kubernetes clusters (each simulated cluster has a kube-system namespace of its own UID),
// on one PostgreSQL. The first release's replica records its cluster's UID and writes; the other
// release's replica learns its UID from its own namespaces informer and is refused the cluster id: it
// stays standby, says why in its log, its /readyz (not ready) and its /metrics, and never writes, not
// even once the first one has left. Clearing the recorded UID, as docs/scaling.md says for a rebuilt
// cluster, lets it take over. The lease-level cases are in test/store/postgres/lease.test.ts; this one
// checks the wiring from the informers to the election and the reports.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { aNamespace, startSimCluster, type SimCluster } from '../support/sim-cluster.js';
import { startHaRig, startReplica, waitReady, type HaRig, type Replica, type WriterStatus } from '../support/replica-process.js';
import { waitFor } from '../support/wait-for.js';

type IdentityStatus = WriterStatus & { identity?: string; kubeSystemUid?: string | null; identityConflict?: { recordedKubeSystemUid: string; kubeSystemUid: string } | null };

describe('ha: two Kubernetes clusters under one cluster id', function () {
  this.timeout(120_000);
  let rig: HaRig | undefined;
  let other: SimCluster | undefined;
  let intruder: Replica | undefined;

  before(async function () {
    rig = await startHaRig(this, { prepare: (sim) => sim.api.store.create('namespaces', aNamespace('kube-system')) });
    other = await startSimCluster(rig.dir, 'gpu-west');
    other.api.store.create('namespaces', aNamespace('kube-system'));
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed' && rig !== undefined) console.log(rig.logTails(), intruder?.outputTail(40));
  });

  after(async () => {
    await intruder?.stop(5_000);
    await other?.close();
    await rig?.close();
  });

  it('keeps the replica of the other cluster standby, with the reason everywhere, until the recorded UID is cleared', async () => {
    if (rig === undefined || other === undefined) throw new Error('No rig');
    const { clusterId, sql } = rig;
    const uidOf = (sim: SimCluster) => {
      const uid = sim.api.store.get('namespaces', { name: 'kube-system' })?.metadata.uid;
      if (uid === undefined) throw new Error('kube-system has no uid');
      return uid;
    };
    const [east, west] = [uidOf(rig.sim), uidOf(other)];

    const writer = await rig.start('east-a');
    await waitReady(writer);
    expect(await writer.role(clusterId)).to.include({ role: 'writer', epoch: 1, identity: 'known', kubeSystemUid: east });
    expect((await sql('SELECT kube_system_uid FROM clusters WHERE cluster_id = $1', [clusterId])).rows).to.deep.equal([{ kube_system_uid: east }]);

    intruder = await startReplica({
      instanceId: 'west-a', dbUrl: rig.postgres.url, clusterId, kubeconfigPath: other.kubeconfigPath,
      tokensFile: join(rig.dir, 'tokens.json'), logFile: join(rig.dir, 'west-a.log'),
    });
    const refused = await waitFor(
      async () => {
        const status = (await intruder?.role(clusterId)) as IdentityStatus | undefined;
        return status?.identityConflict ? status : undefined;
      },
      { what: 'west-a to be refused the cluster id', timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(refused).to.include({ role: 'standby', epoch: null, takeovers: 0, kubeSystemUid: west });
    expect(refused.identityConflict).to.deep.equal({ recordedKubeSystemUid: east, kubeSystemUid: west });
    expect(refused.lastError).to.include(`Refusing to write cluster "${clusterId}"`).and.include(east).and.include(west)
      .and.include(`UPDATE clusters SET kube_system_uid = NULL WHERE cluster_id = '${clusterId}'`);
    const readyz = await intruder.readyz();
    expect(readyz.status).to.equal(503);
    const metrics = await (await fetch(`${intruder.adminUrl}/metrics`)).text();
    expect(metrics).to.match(new RegExp(`^gpucap_cluster_writer_identity_conflict\\{cluster="${clusterId}"[^}]*\\} 1$`, 'm'));
    expect(metrics).to.match(new RegExp(`^gpucap_cluster_writer\\{cluster="${clusterId}"[^}]*\\} 0$`, 'm'));
    expect(intruder.outputTail(200)).to.include('"level":"error"').and.include(`kube-system namespace UID is ${east}`);
    expect(await writer.role(clusterId)).to.include({ role: 'writer', epoch: 1 });

    // The first release leaves: the lock is free, and still the replica of the other cluster does not take it.
    await writer.stop();
    await sleep(5_000);
    expect(await intruder.role(clusterId)).to.include({ role: 'standby', takeovers: 0 });
    expect((await sql('SELECT holder, epoch FROM writer_leases WHERE cluster_id = $1', [clusterId])).rows).to.deep.equal([{ holder: 'east-a', epoch: 1 }]);

    // The cluster was rebuilt after all: clearing the recorded UID hands the id to the new cluster.
    await sql('UPDATE clusters SET kube_system_uid = NULL WHERE cluster_id = $1', [clusterId]);
    await waitFor(async () => (await intruder?.role(clusterId))?.role === 'writer', { what: 'west-a to take the cluster id over', timeoutMs: 20_000, intervalMs: 100 });
    expect(await intruder.role(clusterId)).to.include({ epoch: 2, identityConflict: null });
    await waitReady(intruder);
    expect((await sql('SELECT kube_system_uid FROM clusters WHERE cluster_id = $1', [clusterId])).rows).to.deep.equal([{ kube_system_uid: west }]);
  });
});
