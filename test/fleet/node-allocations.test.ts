// What running pods hold per node, as the indexer's intervals tell it: an open interval holds its
// share on its pod's node, a closed or unstarted one nothing; a workload's closing and a relist that
// lacks a pod free what they held; the version moves only when something changed.
import { expect } from 'chai';
import { NodeAllocations } from '../../src/fleet/node-allocations.js';
import type { PodGpuInterval } from '../../src/domain/workload.js';

const interval = (podUid: string, workloadId: string, share: number, open = true): PodGpuInterval => ({
  podUid, workloadId, gpus: Math.ceil(share), share, startedAt: 1_000, finishedAt: open ? null : 2_000,
});

describe('fleet/node-allocations', () => {
  it('holds each open interval\'s share on its node until it closes, moves or its workload ends', () => {
    const allocations = new NodeAllocations();
    allocations.interval(interval('p1', 'job-a', 4), 'gpu-a');
    allocations.interval(interval('p2', 'job-a', 0.25), 'gpu-a');
    allocations.interval(interval('p3', 'pod-b', 2), 'gpu-b');
    allocations.interval({ ...interval('p4', 'pod-c', 1), startedAt: null }, 'gpu-b');
    allocations.interval(interval('p5', 'pod-d', 1), null);
    expect([allocations.allocatedOn('gpu-a'), allocations.allocatedOn('gpu-b')]).to.deep.equal([4.25, 2]);

    allocations.interval(interval('p2', 'job-a', 0.25, false), 'gpu-a');
    expect(allocations.allocatedOn('gpu-a')).to.equal(4);
    allocations.closed(['job-a']);
    expect(allocations.allocatedOn('gpu-a')).to.equal(0);
    allocations.interval(interval('p3', 'pod-b', 2), 'gpu-c');
    expect([allocations.allocatedOn('gpu-b'), allocations.allocatedOn('gpu-c')]).to.deep.equal([0, 2]);
  });

  it('keeps only the pods a relist kept, and moves its version only on a change', () => {
    const allocations = new NodeAllocations();
    allocations.interval(interval('p1', 'pod-a', 1), 'gpu-a');
    allocations.interval(interval('p2', 'pod-b', 1), 'gpu-a');
    const version = allocations.version;
    allocations.interval(interval('p1', 'pod-a', 1), 'gpu-a');
    expect(allocations.version).to.equal(version);
    allocations.retainPods(new Set(['p2']));
    expect(allocations.allocatedOn('gpu-a')).to.equal(1);
    expect(allocations.version).to.be.greaterThan(version);
  });
});
