// A workload's share of its GPUs through the mappers: each pod's interval carries the share it held on
// its own node, and the row says gpu_count × the share per device, how it was shared and the model.
import { expect } from 'chai';
import { mapJob } from '../../../src/workloads/mapping/map-job.js';
import { mapPod } from '../../../src/workloads/mapping/map-pod.js';
import { podShares } from '../../../src/workloads/mapping/pod-shares.js';
import type { Node } from '../../../src/k8s/objects/k8s-types.js';
import { nodeFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';
import { aContainer, aContext, aJob, aJobPod, aPod, jobFacts, podFacts } from '../fixtures.js';

const NODES = new Map<string, Node>(
  ['node-mig-mixed-h100', 'node-whole-h100', 'node-time-slicing-a10g'].map((name) => {
    const node = nodeFixture(`gpu-sharing/${name}.json`);
    return [name, node];
  }),
);
const shares = (basis: 'equivalents' | 'devices' = 'equivalents') =>
  podShares({ get: (name) => NODES.get(name ?? '') }, { basis, settings: {} });
const RUNNING = { phase: 'Running', startTime: '2026-11-20T10:00:00Z' };
const mig = (n: number) => ({ containers: [aContainer({ limits: { 'nvidia.com/mig-1g.10gb': String(n) } })] });

describe('workloads: shares through the mappers', () => {
  it('a pod of two 1g.10gb slices of an H100: 2 devices, 2/7 of a GPU, mig', () => {
    const pod = podFacts(aPod({ spec: { nodeName: 'node-mig-mixed-h100', ...mig(2) }, status: RUNNING }));
    const mapped = mapPod(pod, aContext({ shares: shares() }));
    expect(mapped?.workload).to.include({ gpuCount: 2, allocatedGpus: 2 / 7, gpuSharing: 'mig', gpuModel: 'NVIDIA-H100-80GB-HBM3' });
    expect(mapped?.intervals[0]).to.include({ gpus: 2, share: 2 / 7 });
  });

  it('on the devices basis, a slice counts as a GPU', () => {
    const pod = podFacts(aPod({ spec: { nodeName: 'node-mig-mixed-h100', ...mig(2) }, status: RUNNING }));
    expect(mapPod(pod, aContext({ shares: shares('devices') }))?.workload).to.include({ gpuCount: 2, allocatedGpus: 2, gpuSharing: 'mig' });
  });

  it('a Job whose pods run on a whole-GPU node and a time-sliced one integrates each pod at its own share', () => {
    const job = jobFacts(aJob({ spec: { parallelism: 2 } }));
    const pods = [
      podFacts(aJobPod('job-1', { metadata: { uid: 'p-whole' }, spec: { nodeName: 'node-whole-h100', containers: [aContainer({ limits: { 'nvidia.com/gpu': '1' } })] }, status: RUNNING })),
      podFacts(aJobPod('job-1', { metadata: { uid: 'p-sliced' }, spec: { nodeName: 'node-time-slicing-a10g', containers: [aContainer({ limits: { 'nvidia.com/gpu': '1' } })] }, status: RUNNING })),
    ];
    const mapped = mapJob(job, aContext({ pods, shares: shares() }));
    expect(mapped?.intervals.map((interval) => [interval.podUid, interval.share])).to.deep.equal([['p-whole', 1], ['p-sliced', 0.25]]);
    expect(mapped?.workload).to.include({ gpuCount: 2, allocatedGpus: 1.25, gpuSharing: 'time_slicing', gpuModel: 'NVIDIA-H100-80GB-HBM3' });
  });

  it('a pending Job: its template on no node, a whole GPU each', () => {
    const mapped = mapJob(jobFacts(aJob({ spec: { parallelism: 3 } })), aContext({ pods: [], shares: shares() }));
    expect(mapped?.workload).to.include({ gpuCount: 3, allocatedGpus: 3, gpuSharing: 'exclusive', gpuModel: null });
  });

  it('without shares, the rows and intervals are as before: no share fields at all', () => {
    const pod = podFacts(aPod({ spec: { nodeName: 'node-mig-mixed-h100', ...mig(2) }, status: RUNNING }));
    const mapped = mapPod(pod, aContext());
    expect(mapped?.workload).to.not.have.any.keys('allocatedGpus', 'gpuSharing', 'gpuModel');
    expect(mapped?.intervals[0]).to.not.have.property('share');
  });
});
