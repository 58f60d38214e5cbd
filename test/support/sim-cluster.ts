// A simulated cluster for service-level tests: the simulated API on loopback, its kubeconfig on disk
// (as an operator would mount it), and builders for the objects a GPU cluster holds. Tests change the
// cluster through the simulator's store, which emits the watch events a real API server would.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FieldValues } from '../../sim/dcgm-exporter/types.js';
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { startKubeApi, type KubeApi } from '../../sim/kube-api/server.js';
export { aGpuJob, aGpuNode, aGpuPod, aNamespace, anExporterPod, finished, running, type PodShape } from '../../sim/kube-api/objects.js';

export interface SimCluster {
  api: KubeApi;
  /** A kubeconfig file whose current context is `name`. */
  kubeconfigPath: string;
  close(): Promise<void>;
}

/** `dra`: the simulated API serves resource.k8s.io/v1 (claims, slices, classes). */
export async function startSimCluster(dir: string, name: string, options: { bookmarkIntervalMs?: number; dra?: boolean } = {}): Promise<SimCluster> {
  const api = await startKubeApi({
    clusterName: name,
    token: `${name}-token`,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 200,
    ...(options.dra === undefined ? {} : { dra: options.dra }),
  });
  const kubeconfigPath = join(dir, `${name}.kubeconfig`);
  writeFileSync(kubeconfigPath, api.kubeconfig());
  return { api, kubeconfigPath, close: () => api.close() };
}

/** An object's uid: the id of the workload a Job or a bare pod becomes ('' for an object without one). */
export const uidOf = (object: KubeObject): string => object.metadata.uid ?? '';

/** Reflector settings that make recovery take milliseconds instead of seconds. */
export const FAST_INFORMERS = {
  tuning: { backoff: { baseMs: 20, maxMs: 200 }, stallTimeoutMs: 3_000, listTimeoutMs: 3_000, watchTimeoutSeconds: { min: 30, max: 60 } },
  dependencyWaitMs: 2_000,
};

/** An exporter GPU's DCGM fields from its utilization (%), temperature (°C) and power (W). */
export const dcgmValues = (util: number, temp: number, power: number): FieldValues => ({
  DCGM_FI_DEV_GPU_UTIL: util,
  DCGM_FI_DEV_GPU_TEMP: temp,
  DCGM_FI_DEV_POWER_USAGE: power,
  DCGM_FI_DEV_FB_USED: 20000,
  DCGM_FI_DEV_FB_FREE: 60000,
  DCGM_FI_PROF_GR_ENGINE_ACTIVE: util / 200,
});
