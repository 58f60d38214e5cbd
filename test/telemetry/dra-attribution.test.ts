// Attribution of GPUs allocated through Dynamic Resource Allocation: exporter text as the simulator
// renders dcgm-exporter's `dra_*` labels, plus the cluster's pods and ResourceClaims (the NVIDIA DRA
// driver's shapes, test/fixtures/kubernetes/gpu-sharing/) → the workload each GPU's samples belong to.
import { expect } from 'chai';
import { renderDcgmMetrics } from '../../sim/dcgm-exporter/render.js';
import type { SimNodeGpus } from '../../sim/dcgm-exporter/types.js';
import type { WorkloadView } from '../../src/domain/workload.js';
import type { LifetimeRepository } from '../../src/domain/telemetry.js';
import type { ResourceClaim } from '../../src/k8s/objects/dra-types.js';
import type { Pod } from '../../src/k8s/objects/k8s-types.js';
import { GpuTelemetry, type AttachedTelemetry } from '../../src/telemetry/gpu-telemetry.js';
import { rawSlotsFor } from '../../src/telemetry/rings/gpu-rings.js';
import { LifetimeAccumulators } from '../../src/telemetry/sinks/lifetime.js';
import { objectFixture, podFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';
import { FixedClock } from '../support/fixed-clock.js';

const NOW = Date.parse('2026-03-02T12:00:00Z');
const TARGET = {
  key: 'east/gpu-operator/dcgm-dra-1', clusterId: 'east', namespace: 'gpu-operator', pod: 'dcgm-dra-1', node: 'gpu-h100-dra-1', url: 'http://10.0.0.1:9400/metrics',
};
/** pod-dra-claim.json's uid: a pod of no Job is its own workload. */
const TRAIN_POD_UID = '9ce2b348-38d5-5d4a-8d16-d3e2f873f1df';
const ALLOCATED = { name: 'train-dra-0-gpu-x7k2p', namespace: 'ml' };

const inMemory = (): LifetimeRepository => {
  const saved = new Map<string, ReturnType<LifetimeRepository['loadLifetime']>>();
  return { loadLifetime: (id) => saved.get(id), saveLifetimes: (entries) => entries.forEach((e) => saved.set(e.workloadId, e.totals)) };
};

function newTelemetry(): { telemetry: GpuTelemetry; cluster: AttachedTelemetry } {
  const telemetry = new GpuTelemetry({
    discovery: { selectors: ['app=nvidia-dcgm-exporter'], namespaces: ['gpu-operator'], port: 9400, path: '/metrics' },
    gpuResources: ['nvidia.com/gpu'],
    rawSlots: rawSlotsFor(15),
    samples: { lifetime: new LifetimeAccumulators(inMemory(), { clock: new FixedClock(NOW), idleMs: 60_000, intervalSeconds: 15, idleThresholdPercent: 5 }) },
  });
  return { telemetry, cluster: telemetry.attach({ clusterId: 'east' }) };
}

/** Runs on TARGET's node, gpu-h100-dra-1, unless moved to `node`. */
const draPod = (node?: string): Pod => {
  const pod = podFixture('gpu-sharing/pod-dra-claim.json');
  return node === undefined ? pod : { ...pod, spec: { ...pod.spec, nodeName: node } };
};
const allocatedClaim = (): ResourceClaim => objectFixture('gpu-sharing/dra-resourceclaim-allocated.json', 'ResourceClaim');
const workload = (id: string) => ({ workloadId: id }) as WorkloadView;
const lastHour = (telemetry: GpuTelemetry, id: string) =>
  telemetry.summarize({ workload: workload(id), window: { from: NOW - 3_600_000, to: NOW }, lifetime: false, metrics: ['gpu_utilization', 'temperature'] });

describe('telemetry attribution of DRA GPUs', () => {
  it('renders a claimed GPU\'s dra_* labels in the exporter\'s sorted order, without pod labels', () => {
    const node: SimNodeGpus = { hostname: 'gpu-h100-dra-1', gpus: [{ index: 0, uuid: 'GPU-h1', claim: ALLOCATED, values: { DCGM_FI_DEV_GPU_UTIL: 64 } }] };
    const line = renderDcgmMetrics(node).split('\n').find((l) => l.startsWith('DCGM_FI_DEV_GPU_UTIL{'));
    expect(line).to.equal(
      'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-h1",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",' +
        'hostname="gpu-h100-dra-1",DCGM_FI_DRIVER_VERSION="550.127.05",dra_claim_name="train-dra-0-gpu-x7k2p",dra_claim_namespace="ml",' +
        'dra_device_name="gpu-0",dra_driver_name="gpu.nvidia.com",dra_pool_name="gpu-h100-dra-1"} 64',
    );
  });

  it('attributes a series that names only a claim to the workload of the claim\'s reserved pod', async () => {
    const node: SimNodeGpus = {
      hostname: 'gpu-h100-dra-1',
      gpus: [
        { index: 0, uuid: 'GPU-h1', claim: ALLOCATED, values: { DCGM_FI_DEV_GPU_UTIL: 64, DCGM_FI_DEV_GPU_TEMP: 55 } },
        { index: 1, uuid: 'GPU-h2', claim: { name: 'unknown-claim', namespace: 'ml' }, values: { DCGM_FI_DEV_GPU_UTIL: 99 } },
      ],
    };
    const { telemetry, cluster } = newTelemetry();
    // The claim's event before the pod's: attribution waits for both, in either order.
    cluster.onEvent('resourceclaims', { type: 'SYNC', items: [allocatedClaim()] }, undefined);
    cluster.onEvent('pods', { type: 'SYNC', items: [draPod()] }, undefined);
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect(await lastHour(telemetry, TRAIN_POD_UID)).to.deep.equal({
      gpu_utilization: { avg: 64, min: 64, max: 64, current: 64 },
      temperature: { avg: 55, min: 55, max: 55, current: 55 },
    });
    expect(telemetry.stats()).to.include({ gpus: 2, attributedGpus: 1, workloads: 1, gpuPods: 1 });
  });

  it('counts a claimed GPU for nobody when the claim\'s reserved pod runs on another node than the exporter', async () => {
    const node: SimNodeGpus = { hostname: 'gpu-h100-dra-1', gpus: [{ index: 0, uuid: 'GPU-h1', claim: ALLOCATED, values: { DCGM_FI_DEV_GPU_UTIL: 64 } }] };
    const { telemetry, cluster } = newTelemetry();
    cluster.onEvent('resourceclaims', { type: 'SYNC', items: [allocatedClaim()] }, undefined);
    cluster.onEvent('pods', { type: 'SYNC', items: [draPod('gpu-h100-dra-2')] }, undefined);
    const result = telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect(result.dropped).to.deep.equal([{ reason: 'other_node', pod: { namespace: 'ml', name: 'train-dra-0' }, podNode: 'gpu-h100-dra-2', claim: ALLOCATED, gpu: 'GPU-h1' }]);
    expect((await lastHour(telemetry, TRAIN_POD_UID)).gpu_utilization).to.deep.equal({ avg: null, min: null, max: null, current: null });
    expect(telemetry.stats()).to.include({ gpus: 0, attributedGpus: 0, workloads: 0 });
  });

  it('stops attributing once the claim is DELETED', async () => {
    const node: SimNodeGpus = { hostname: 'gpu-h100-dra-1', gpus: [{ index: 0, uuid: 'GPU-h1', claim: ALLOCATED, values: { DCGM_FI_DEV_GPU_UTIL: 10 } }] };
    const { telemetry, cluster } = newTelemetry();
    cluster.onEvent('pods', { type: 'SYNC', items: [draPod()] }, undefined);
    cluster.onEvent('resourceclaims', { type: 'ADDED', object: allocatedClaim() }, undefined);
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW - 30_000);
    cluster.onEvent('resourceclaims', { type: 'DELETED', object: allocatedClaim() }, undefined);
    node.gpus[0] = { index: 0, uuid: 'GPU-h1', claim: ALLOCATED, values: { DCGM_FI_DEV_GPU_UTIL: 90 } };
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect((await lastHour(telemetry, TRAIN_POD_UID)).gpu_utilization).to.deep.equal({ avg: 10, min: 10, max: 10, current: 10 });
  });

  it('attributes a claimed MIG device from the parent\'s series the exporter labels with it, apart from the instances\' own series', async () => {
    const node: SimNodeGpus = {
      hostname: 'gpu-h100-dra-mig-1',
      gpus: [{
        index: 0, uuid: 'GPU-p', values: { DCGM_FI_DEV_GPU_TEMP: 61, DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.4 },
        mig: [
          { profile: '1g.10gb', instanceId: 13, uuid: 'MIG-m13', claim: ALLOCATED, values: { DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.75 } },
          { profile: '1g.10gb', instanceId: 14, values: { DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.1 } },
        ],
      }],
    };
    const text = renderDcgmMetrics(node);
    expect(text).to.contain('dra_device_name="gpu-0-mig-1g10gb-13",dra_driver_name="gpu.nvidia.com",dra_mig_device_uuid="MIG-m13",dra_mig_profile="1g.10gb"');
    const { telemetry, cluster } = newTelemetry();
    cluster.onEvent('pods', { type: 'SYNC', items: [draPod('gpu-h100-dra-mig-1')] }, undefined);
    cluster.onEvent('resourceclaims', { type: 'SYNC', items: [allocatedClaim()] }, undefined);
    const result = telemetry.ingest({ ...TARGET, node: 'gpu-h100-dra-mig-1' }, text, NOW);
    expect(result.gpus).to.equal(3); // GPU-p/MIG-m13 (the parent's labelled series), GPU-p/13, GPU-p/14
    // The parent's figures: what the exporter puts beside the claim's labels.
    expect(await lastHour(telemetry, TRAIN_POD_UID)).to.deep.equal({
      gpu_utilization: { avg: 40, min: 40, max: 40, current: 40 },
      temperature: { avg: 61, min: 61, max: 61, current: 61 },
    });
    expect(telemetry.stats()).to.include({ gpus: 3, attributedGpus: 1 });
  });
});
