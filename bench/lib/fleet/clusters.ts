// The fleet now for the fleet benchmark: one simulated Kubernetes API per cluster (sim/kube-api, in
// the benchmark's process: once listed, the service's watches carry only bookmarks), each serving its
// GPU nodes (the gpu-sharing fixture node of 8 whole H100s under each node's name, model and instance
// type; cordoned, not ready or with an unhealthy GPU as the layout says), the organization's
// namespace and one running pod on most ready nodes. The first cluster is the service's home cluster,
// the others remote kubeconfigs, all configured as the organization's.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../../sim/kube-api/resources.js';
import { aNamespace, running } from '../../../sim/kube-api/objects.js';
import { startKubeApi, type KubeApi } from '../../../sim/kube-api/server.js';
import { nodeFrom, podOn } from '../../../test/support/fleet-fixtures.js';
import { CLUSTER_IDS, FLEET_NOW, GPUS_PER_NODE, INITIATIVE, NAMESPACE, ORGANIZATION, type FleetNode, type FleetShape } from './layout.js';

export interface SimFleet {
  apis: KubeApi[];
  /** GPUCAP_* settings that watch every cluster as the organization's. */
  env: Record<string, string>;
  /** What GET /v1/fleet's `now` should show once every node and pod is seen. */
  expected: { nodes: number; gpus: number; allocatedGpus: number; nodesUnavailable: number; pods: number };
  close(): Promise<void>;
}

export function gpuNode(node: FleetNode): KubeObject {
  const object = nodeFrom('node-whole-h100.json', node.name, node.instanceType, {
    ...(node.state === 'cordoned' ? { unschedulable: true } : {}),
    ...(node.state === 'not_ready' ? { ready: 'False' as const } : {}),
    ...(node.unhealthyGpus > 0 ? { allocatable: { 'nvidia.com/gpu': String(GPUS_PER_NODE - node.unhealthyGpus) } } : {}),
  });
  const labels = { ...object.metadata.labels, 'nvidia.com/gpu.product': node.gpuModel, 'nvidia.com/gpu.count': String(GPUS_PER_NODE) };
  return { ...object, metadata: { ...object.metadata, labels } };
}

/** The running pod a node holds now (started some hours before FLEET_NOW, the service's clock at its start). */
function podOf(node: FleetNode, index: number): KubeObject {
  const startedAt = FLEET_NOW - (1 + (index % 48)) * 1_800_000;
  const pod = podOn(NAMESPACE, `train-${node.name}`, node.name, { 'nvidia.com/gpu': String(node.podGpus) }, running(startedAt));
  // Created before it started (the simulator would stamp the real time, later than the shifted clock).
  return { ...pod, metadata: { ...pod.metadata, creationTimestamp: new Date(startedAt - 60_000).toISOString() } };
}

export async function startSimFleet(shape: FleetShape, nodes: readonly FleetNode[], workDir: string): Promise<SimFleet> {
  const clusterIds = CLUSTER_IDS.slice(0, shape.clusters);
  const apis: KubeApi[] = [];
  try {
    for (const clusterId of clusterIds) {
      const api = await startKubeApi({ clusterName: clusterId, token: `${clusterId}-token`, bookmarkIntervalMs: 1000 });
      apis.push(api);
      const own = nodes.filter((n) => n.clusterId === clusterId);
      const labels = { 'gpucap.io/organization': ORGANIZATION, 'gpucap.io/initiative': INITIATIVE };
      api.store.seed('namespaces', [aNamespace(NAMESPACE, labels)]);
      api.store.seed('nodes', own.map(gpuNode));
      api.store.seed('pods', own.flatMap((n, i) => (n.podGpus > 0 ? [podOf(n, i)] : [])));
    }
  } catch (error) {
    await Promise.all(apis.map((api) => api.close()));
    throw error;
  }
  const remoteDir = join(workDir, 'remote-clusters');
  mkdirSync(remoteDir, { recursive: true });
  const kubeconfigPath = join(workDir, 'kubeconfig.json');
  const [home, ...remotes] = apis;
  writeFileSync(kubeconfigPath, home?.kubeconfig() ?? '');
  const remoteClusters = remotes.map((api, i) => {
    const clusterId = clusterIds[i + 1] ?? '';
    writeFileSync(join(remoteDir, `${clusterId}.kubeconfig`), api.kubeconfig());
    return { file: `${clusterId}.kubeconfig`, cluster_id: clusterId, organization_id: ORGANIZATION };
  });
  const inService = nodes.filter((n) => n.state === 'ready');
  return {
    apis,
    env: {
      GPUCAP_HOME_CLUSTER_ENABLED: 'true',
      GPUCAP_KUBECONFIG: kubeconfigPath,
      GPUCAP_CLUSTER_ID: clusterIds[0] ?? CLUSTER_IDS[0],
      GPUCAP_CLUSTER_ORGANIZATION_ID: ORGANIZATION,
      ...(remoteClusters.length === 0
        ? {}
        : { GPUCAP_REMOTE_KUBECONFIG_DIR: remoteDir, GPUCAP_REMOTE_CLUSTERS: JSON.stringify(remoteClusters) }),
    },
    expected: {
      nodes: nodes.length,
      gpus: nodes.length * GPUS_PER_NODE,
      allocatedGpus: nodes.reduce((sum, n) => sum + n.podGpus, 0),
      nodesUnavailable: nodes.length - inService.length,
      pods: nodes.filter((n) => n.podGpus > 0).length,
    },
    close: async () => {
      await Promise.all(apis.map((api) => api.close()));
    },
  };
}
