// Attribution inside the telemetry state: exporter text (as the simulator renders it for real label
// styles) plus the cluster's GPU pods → which workload each GPU's samples belong to.
import { expect } from 'chai';
import { renderDcgmMetrics } from '../../sim/dcgm-exporter/render.js';
import type { SimNodeGpus } from '../../sim/dcgm-exporter/types.js';
import type { WorkloadView } from '../../src/domain/workload.js';
import { emptyUsage, type GpuUsage } from '../../src/domain/gpu-usage.js';
import { BucketAccumulator } from '../../src/telemetry/sinks/bucket-accumulator.js';
import { GpuTelemetry } from '../../src/telemetry/gpu-telemetry.js';
import { rawSlotsFor } from '../../src/telemetry/rings/gpu-rings.js';
import { LifetimeAccumulators } from '../../src/telemetry/sinks/lifetime.js';
import type { LifetimeRepository, LifetimeSave } from '../../src/domain/telemetry.js';
import type { Pod } from '../../src/k8s/objects/k8s-types.js';
import { FixedClock } from '../support/fixed-clock.js';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const TARGET = { key: 'east/gpu-operator/dcgm-n1', clusterId: 'east', namespace: 'gpu-operator', pod: 'dcgm-n1', node: 'n1', url: 'http://10.0.0.1:9400/metrics' };

const inMemory = (): LifetimeRepository => {
  const saved = new Map<string, ReturnType<LifetimeRepository['loadLifetime']>>();
  return { loadLifetime: (id) => saved.get(id), saveLifetimes: (entries) => entries.forEach((e) => saved.set(e.workloadId, e.totals)) };
};

/** A running GPU pod, on TARGET's node unless told otherwise. */
function gpuPod(name: string, options: { jobUid?: string; resource?: string; node?: string } = {}): Pod {
  return {
    metadata: { name, namespace: 'llm', uid: `uid-${name}`, ...(options.jobUid ? { ownerReferences: [{ kind: 'Job', apiVersion: 'batch/v1', name: 'j', uid: options.jobUid }] } : {}) },
    spec: { nodeName: options.node ?? TARGET.node, containers: [{ name: 'main', resources: { limits: { [options.resource ?? 'nvidia.com/gpu']: '1' } } }] },
    status: { phase: 'Running' },
  };
}

function telemetryWith(pods: Pod[], repository: LifetimeRepository = inMemory()): GpuTelemetry {
  const telemetry = new GpuTelemetry({
    discovery: { selectors: ['app=nvidia-dcgm-exporter'], namespaces: ['gpu-operator'], port: 9400, path: '/metrics' },
    gpuResources: ['nvidia.com/gpu', 'nvidia.com/mig-*'],
    rawSlots: rawSlotsFor(15),
    samples: { lifetime: new LifetimeAccumulators(repository, { clock: new FixedClock(NOW), idleMs: 60_000, intervalSeconds: 15, idleThresholdPercent: 5 }) },
  });
  telemetry.attach({ clusterId: 'east' }).onEvent('pods', { type: 'SYNC', items: pods }, undefined);
  return telemetry;
}

const workload = (id: string) => ({ workloadId: id }) as WorkloadView;
const lastHour = (telemetry: GpuTelemetry, id: string) =>
  telemetry.summarize({ workload: workload(id), window: { from: NOW - 3_600_000, to: NOW }, lifetime: false, metrics: ['gpu_utilization', 'temperature', 'memory_utilization'] });

describe('telemetry attribution', () => {
  it('attributes a MIG slice to its pod\'s Job: utilization from the graphics engine, no temperature', async () => {
    const node: SimNodeGpus = {
      hostname: 'n1',
      gpus: [{
        index: 0, uuid: 'GPU-a100', values: { DCGM_FI_DEV_GPU_TEMP: 61 },
        mig: [
          { profile: '1g.10gb', instanceId: 13, pod: { pod: 'train-0', namespace: 'llm', container: 'main' }, values: { DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.75, DCGM_FI_DEV_FB_USED: 2432, DCGM_FI_DEV_FB_FREE: 7296 } },
          { profile: '1g.10gb', instanceId: 14, values: { DCGM_FI_PROF_GR_ENGINE_ACTIVE: 0.1 } },
        ],
      }],
    };
    const telemetry = telemetryWith([gpuPod('train-0', { jobUid: 'job-1', resource: 'nvidia.com/mig-1g.10gb' })]);
    const result = telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect(result.gpus).to.equal(3); // the whole GPU and two instances
    expect(await lastHour(telemetry, 'job-1')).to.deep.equal({
      gpu_utilization: { avg: 75, min: 75, max: 75, current: 75 },
      temperature: { avg: null, min: null, max: null, current: null },
      memory_utilization: { avg: 25, min: 25, max: 25, current: 25 },
    });
    expect(telemetry.stats()).to.include({ gpus: 3, attributedGpus: 1, workloads: 1 });
  });

  it('attributes with the old exporter\'s pod_name/pod_namespace labels', async () => {
    const node: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', pod: { pod: 'solo', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 33 } }] };
    const telemetry = telemetryWith([gpuPod('solo')]);
    telemetry.ingest(TARGET, renderDcgmMetrics(node, { labelStyle: 'v3', podLabelNames: { pod: 'pod_name', namespace: 'pod_namespace', container: 'container_name' } }), NOW);
    expect((await lastHour(telemetry, 'uid-solo')).gpu_utilization).to.deep.equal({ avg: 33, min: 33, max: 33, current: 33 });
  });

  it('reserves ring space for 8 GPUs per exporter before the first tick, then for the GPUs per payload it has read', () => {
    const telemetry = telemetryWith([]);
    const ringBytes = (): number => telemetry.stats().ringReservedBytes;
    const exporters = (n: number) => Array.from({ length: n }, (_, i) => ({ ...TARGET, key: `${TARGET.key}-${i}` }));
    telemetry.beforeTick(exporters(2));
    const perGpu = ringBytes() / 16;
    expect(perGpu).to.be.within(40 * 1024, 48 * 1024);
    const twoGpus: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', values: {} }, { index: 1, uuid: 'GPU-2', values: {} }] };
    telemetry.ingest(TARGET, renderDcgmMetrics(twoGpus), NOW);
    telemetry.beforeTick(exporters(10));
    expect(ringBytes() / perGpu).to.equal(20);
    expect(telemetry.stats()).to.include({ gpus: 2, ringBytes: 2 * perGpu });
  });

  it('keeps the samples of a pod it does not know, attributed to no workload', async () => {
    const node: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', pod: { pod: 'stranger', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 90 } }] };
    const telemetry = telemetryWith([]);
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect(telemetry.stats()).to.include({ gpus: 1, attributedGpus: 0, workloads: 0 });
    expect(await telemetry.lastHour('gpu_utilization', NOW)).to.deep.equal(new Map());
  });

  it('stores nothing of a GPU whose pod runs on another node than the exporter, and says so', async () => {
    const node: SimNodeGpus = {
      hostname: 'n1',
      gpus: [
        { index: 0, uuid: 'GPU-here', pod: { pod: 'solo', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 30 } },
        { index: 1, uuid: 'GPU-forged', pod: { pod: 'victim', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 100 } },
      ],
    };
    const telemetry = telemetryWith([gpuPod('solo'), gpuPod('victim', { node: 'n2' })]);
    const result = telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect(result.dropped).to.deep.equal([{ reason: 'other_node', pod: { namespace: 'llm', name: 'victim' }, podNode: 'n2', claim: undefined, gpu: 'GPU-forged' }]);
    expect(result.gpus).to.equal(2);
    expect(telemetry.stats()).to.include({ gpus: 1, attributedGpus: 1, workloads: 1 });
    expect((await lastHour(telemetry, 'uid-victim')).gpu_utilization).to.deep.equal({ avg: null, min: null, max: null, current: null });
    expect((await lastHour(telemetry, 'uid-solo')).gpu_utilization).to.deep.equal({ avg: 30, min: 30, max: 30, current: 30 });
    // The exporter of the victim's node counts it.
    const own = telemetry.ingest({ ...TARGET, key: 'east/gpu-operator/dcgm-n2', node: 'n2' }, renderDcgmMetrics({ hostname: 'n2', gpus: [node.gpus[1] as SimNodeGpus['gpus'][number]] }), NOW);
    expect(own.dropped).to.deep.equal([]);
    expect((await lastHour(telemetry, 'uid-victim')).gpu_utilization).to.deep.equal({ avg: 100, min: 100, max: 100, current: 100 });
  });

  it('answers the lifetime of a workload from its totals, not from the window', async () => {
    const node: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', pod: { pod: 'solo', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 20 } }] };
    const telemetry = telemetryWith([gpuPod('solo')]);
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW - 30 * 3_600_000); // older than every ring
    node.gpus[0] = { ...node.gpus[0], values: { DCGM_FI_DEV_GPU_UTIL: 40 } } as SimNodeGpus['gpus'][number];
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    const lifetime = await telemetry.summarize({ workload: workload('uid-solo'), window: { from: 0, to: NOW }, lifetime: true, metrics: ['gpu_utilization'] });
    expect(lifetime.gpu_utilization).to.deep.equal({ avg: 30, min: 20, max: 40, current: 40 });
  });

  it('gives job_lifetime percentiles from the rings while they hold every sample its totals counted', async () => {
    const node: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', pod: { pod: 'solo', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 20 } }] };
    const telemetry = telemetryWith([gpuPod('solo')]);
    [20, 40, 90].forEach((util, i) => {
      node.gpus[0] = { ...node.gpus[0], values: { DCGM_FI_DEV_GPU_UTIL: util } } as SimNodeGpus['gpus'][number];
      telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW + i * 15_000); // one minute, one 5-minute bucket
    });
    const lifetime = (startedAt: number) =>
      telemetry.summarize({ workload: workload('uid-solo'), window: { from: startedAt, to: NOW }, lifetime: true, metrics: ['gpu_utilization'], percentiles: [50, 99] });
    // Started 10 minutes ago: the raw samples, exact.
    expect(await lifetime(NOW - 600_000)).to.deep.equal({ gpu_utilization: { avg: 50, min: 20, max: 90, current: 90, p50: 40, p99: 90 } });
    // Started 10 hours ago: the 5-minute buckets, where the three samples share one bucket (mean 50).
    expect((await lifetime(NOW - 36_000_000)).gpu_utilization).to.deep.equal({ avg: 50, min: 20, max: 90, current: 90, p50: 50, p99: 50 });
  });

  it('answers job_lifetime percentiles null once the totals count samples the rings do not hold (a restart)', async () => {
    const repository = inMemory();
    repository.saveLifetimes([{ workloadId: 'uid-solo', totals: { gpu_utilization: { count: 4, sum: 120, min: 10, max: 50, current: 30 } } }]);
    const node: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', pod: { pod: 'solo', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 30 } }] };
    const telemetry = telemetryWith([gpuPod('solo')], repository);
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    const answer = await telemetry.summarize({ workload: workload('uid-solo'), window: { from: NOW - 600_000, to: NOW }, lifetime: true, metrics: ['gpu_utilization'], percentiles: [95] });
    expect(answer.gpu_utilization).to.deep.equal({ avg: 30, min: 10, max: 50, current: 30, p95: null });
    // The window ranges read what the rings hold.
    const hour = await telemetry.summarize({ workload: workload('uid-solo'), window: { from: NOW - 3_600_000, to: NOW }, lifetime: false, metrics: ['gpu_utilization'], percentiles: [95] });
    expect(hour.gpu_utilization).to.deep.equal({ avg: 30, min: 30, max: 30, current: 30, p95: 30 });
  });

  it('ranks a workload by each payload as soon as it is ingested, and no longer once its samples are over an hour old', async () => {
    const node: SimNodeGpus = { hostname: 'n1', gpus: [{ index: 0, uuid: 'GPU-1', pod: { pod: 'solo', namespace: 'llm' }, values: { DCGM_FI_DEV_GPU_UTIL: 20 } }] };
    const telemetry = telemetryWith([gpuPod('solo')]);
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW - 15_000);
    expect(await telemetry.lastHour('gpu_utilization', NOW)).to.deep.equal(new Map([['uid-solo', { avg: 20, current: 20 }]]));
    node.gpus[0] = { ...node.gpus[0], values: { DCGM_FI_DEV_GPU_UTIL: 60 } } as SimNodeGpus['gpus'][number];
    telemetry.ingest(TARGET, renderDcgmMetrics(node), NOW);
    expect(await telemetry.lastHour('gpu_utilization', NOW)).to.deep.equal(new Map([['uid-solo', { avg: 40, current: 60 }]]));
    expect(await telemetry.lastHour('gpu_utilization', NOW + 3_600_000 - 10_000)).to.deep.equal(new Map([['uid-solo', { avg: 60, current: 60 }]]));
    expect(await telemetry.lastHour('gpu_utilization', NOW + 3_600_000 + 1_000)).to.deep.equal(new Map());
  });
});

describe('telemetry usage figures through ingest (both paths)', () => {
  const USAGE_RULES = { intervalSeconds: 15, idleThresholdPercent: 5 };
  const DISCOVERY = { selectors: ['app=nvidia-dcgm-exporter'], namespaces: ['gpu-operator'], port: 9400, path: '/metrics' };
  /** A whole GPU at `util` % and 300 W reporting `xid`, and a MIG slice at 50 % whose exporter repeats the GPU's 200 W. */
  const payload = (util: number, xid: number) => [
    `DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",pod="solo",namespace="llm"} ${util}`,
    'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",pod="solo",namespace="llm"} 300',
    `DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-1",pod="solo",namespace="llm"} ${xid}`,
    'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-2",GPU_I_ID="3",pod="slice",namespace="llm"} 0.5',
    'DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-2",GPU_I_ID="3",pod="slice",namespace="llm"} 200',
    '',
  ].join('\n');
  /** One minute from NOW: XID 0 (the baseline), then 79, 79 and 13: two new errors. */
  const feed = (telemetry: GpuTelemetry) => {
    telemetry.attach({ clusterId: 'east' }).onEvent('pods', { type: 'SYNC', items: [gpuPod('solo'), gpuPod('slice')] }, undefined);
    [0, 79, 79, 13].forEach((xid, i) => telemetry.ingest(TARGET, payload(2, xid), NOW + i * 15_000));
  };
  const expected: Record<string, GpuUsage> = {
    // 4 samples × 15 s at 200 (0.01 %) and 3000 (0.1 W); 2 % is below 5 %: an idle minute.
    'uid-solo': { ...emptyUsage(), utilSeconds: 60, utilWeighted: 12_000, idleSeconds: 60, powerSeconds: 60, energyDj: 180_000, gpuErrors: 2 },
    'uid-slice': { ...emptyUsage(), utilSeconds: 60, utilWeighted: 300_000 },
  };

  it('on SQLite: saves each workload\'s figures with its lifetime totals', () => {
    const saves: LifetimeSave[] = [];
    const clock = new FixedClock(NOW);
    const lifetimes = new LifetimeAccumulators({ loadLifetime: () => undefined, saveLifetimes: (entries) => void saves.push(...entries) }, { clock, idleMs: 60_000, ...USAGE_RULES });
    feed(new GpuTelemetry({ discovery: DISCOVERY, gpuResources: ['nvidia.com/gpu'], rawSlots: rawSlotsFor(15), samples: { lifetime: lifetimes } }));
    clock.set(NOW + 60_000);
    lifetimes.flush();
    expect(Object.fromEntries(saves.map((e) => [e.workloadId, e.usage]))).to.deep.equal(expected);
  });

  it('on PostgreSQL: puts each workload\'s figures in its bucket rows', () => {
    const buckets = new BucketAccumulator({ widthMs: 60_000, ...USAGE_RULES });
    feed(new GpuTelemetry({ discovery: DISCOVERY, gpuResources: ['nvidia.com/gpu'], rawSlots: rawSlotsFor(15), samples: { buckets } }));
    const rows = buckets.takeEnded(NOW + 60_000).flatMap((b) => b.rows);
    expect(Object.fromEntries(rows.map((r) => [r.workloadId, r.usage]))).to.deep.equal(expected);
  });
});
