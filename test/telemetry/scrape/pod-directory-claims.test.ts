// The pod directory's DRA side: pods that hold GPUs through ResourceClaims, and the claims' reserved
// pods, on the NVIDIA DRA driver's object shapes (test/fixtures/kubernetes/gpu-sharing/, SOURCES.md
// there), so that a dcgm-exporter series naming a claim and no pod reaches the pod's workload.
import { expect } from 'chai';
import type { ResourceClaim } from '../../../src/k8s/objects/dra-types.js';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import { parseSelectors } from '../../../src/telemetry/scrape/exporter-target.js';
import { PodDirectory } from '../../../src/telemetry/scrape/pod-directory.js';
import { objectFixture, podFixture } from '../../fixtures/kubernetes/kubernetes-fixtures.js';

const DISCOVERY = { selectors: ['app=nvidia-dcgm-exporter'], namespaces: ['gpu-operator'], port: 9400, path: '/metrics' };
/** The node of pod-dra-claim.json, and of every claimPod(). */
const NODE = 'gpu-h100-dra-1';
const ALLOCATED = 'train-dra-0-gpu-x7k2p';

function directory(): PodDirectory {
  return new PodDirectory('east', { discovery: DISCOVERY, selectors: parseSelectors(DISCOVERY.selectors), gpuResources: ['nvidia.com/gpu'] });
}

const draPod = (): Pod => podFixture('gpu-sharing/pod-dra-claim.json');
const claimFixture = (name: string): ResourceClaim => objectFixture(`gpu-sharing/${name}.json`, 'ResourceClaim');

/** A pod of a Job holding a claim, as a claim template gives it one. */
function claimPod(name: string, jobUid: string, node = NODE): Pod {
  return {
    metadata: { name, namespace: 'ml', uid: `uid-${name}`, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: jobUid, controller: true }] },
    spec: { nodeName: node, resourceClaims: [{ name: 'gpu', resourceClaimName: 'shared-h100' }], containers: [{ name: 'main' }] } as Pod['spec'],
    status: { phase: 'Running' },
  };
}

function claim(name: string, pods: string[], namespace = 'ml'): ResourceClaim {
  return { metadata: { name, namespace, uid: `uid-${name}` }, status: { reservedFor: pods.map((pod) => ({ resource: 'pods', name: pod, uid: `uid-${pod}` })) } };
}

const byClaim = (d: PodDirectory, name: string, namespace = 'ml') => d.attributionOf({ pod: undefined, claim: { namespace, name } }, NODE);

describe('telemetry pod directory: DRA claims', () => {
  it('counts a pod with resource claims and no nvidia.com/gpu request as a GPU pod', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [draPod()] }, undefined);
    expect(d.gpuPods).to.equal(1);
    expect(d.workloadOf('ml', 'train-dra-0')).to.equal('9ce2b348-38d5-5d4a-8d16-d3e2f873f1df');
  });

  it('resolves a claim to its reserved pod\'s workload, whether the claim or the pod arrives first', () => {
    const claimFirst = directory();
    claimFirst.onClaimEvent({ type: 'ADDED', object: claimFixture('dra-resourceclaim-allocated') }, undefined);
    expect(byClaim(claimFirst, ALLOCATED)).to.equal(undefined);
    claimFirst.onPodEvent({ type: 'ADDED', object: draPod() }, undefined);
    expect(byClaim(claimFirst, ALLOCATED)).to.equal('9ce2b348-38d5-5d4a-8d16-d3e2f873f1df');

    const podFirst = directory();
    podFirst.onPodEvent({ type: 'ADDED', object: draPod() }, undefined);
    podFirst.onClaimEvent({ type: 'SYNC', items: [claimFixture('dra-resourceclaim-allocated')] }, undefined);
    expect(byClaim(podFirst, ALLOCATED)).to.equal('9ce2b348-38d5-5d4a-8d16-d3e2f873f1df');
    expect(byClaim(podFirst, ALLOCATED, 'other')).to.equal(undefined);
    expect(podFirst.reservedClaims).to.equal(1);
  });

  it('lets a pod label win over the claim, and falls back to the claim when the directory does not know the pod', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [claimPod('infer-a', 'job-a'), claimPod('solo', 'job-s')] }, undefined);
    d.onClaimEvent({ type: 'ADDED', object: claim('c', ['infer-a']) }, undefined);
    expect(d.attributionOf({ pod: { namespace: 'ml', name: 'solo' }, claim: { namespace: 'ml', name: 'c' } }, NODE)).to.equal('job-s');
    expect(d.attributionOf({ pod: { namespace: 'ml', name: 'gone' }, claim: { namespace: 'ml', name: 'c' } }, NODE)).to.equal('job-a');
    expect(d.attributionOf({ pod: undefined, claim: undefined }, NODE)).to.equal(undefined);
  });

  it('counts a claim\'s GPU for nobody when its reserved pod runs on another node than the exporter', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [claimPod('infer-a', 'job-a', 'elsewhere')] }, undefined);
    d.onClaimEvent({ type: 'ADDED', object: claim('c', ['infer-a']) }, undefined);
    expect(byClaim(d, 'c')).to.deep.equal({ reason: 'other_node', pod: { namespace: 'ml', name: 'infer-a' }, podNode: 'elsewhere', claim: { namespace: 'ml', name: 'c' } });
    expect(d.attributionOf({ pod: undefined, claim: { namespace: 'ml', name: 'c' } }, 'elsewhere')).to.equal('job-a');
    // A pod label that names a pod elsewhere is not rescued by a claim whose pod is here.
    d.onPodEvent({ type: 'ADDED', object: claimPod('here', 'job-h') }, undefined);
    d.onClaimEvent({ type: 'ADDED', object: claim('h', ['here']) }, undefined);
    expect(d.attributionOf({ pod: { namespace: 'ml', name: 'infer-a' }, claim: { namespace: 'ml', name: 'h' } }, NODE)).to.deep.include({ reason: 'other_node', podNode: 'elsewhere' });
  });

  it('gives a claim shared by pods of two workloads to the first reserved pod it knows, whole', () => {
    const d = directory();
    // dra-resourceclaim-shared.json is reserved for infer-a, then infer-b.
    d.onClaimEvent({ type: 'ADDED', object: claimFixture('dra-resourceclaim-shared') }, undefined);
    d.onPodEvent({ type: 'ADDED', object: claimPod('infer-b', 'job-b') }, undefined);
    expect(byClaim(d, 'shared-h100')).to.equal('job-b');
    d.onPodEvent({ type: 'ADDED', object: claimPod('infer-a', 'job-a') }, undefined);
    expect(byClaim(d, 'shared-h100')).to.equal('job-a');
    d.onPodEvent({ type: 'DELETED', object: claimPod('infer-a', 'job-a') }, undefined);
    expect(byClaim(d, 'shared-h100')).to.equal('job-b');
  });

  it('follows a claim\'s reservedFor through changes, and forgets a DELETED claim or one reserved for no pod', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [claimPod('p-0', 'job-0'), claimPod('p-1', 'job-1')] }, undefined);
    d.onClaimEvent({ type: 'ADDED', object: claim('c', ['p-0']) }, undefined);
    d.onClaimEvent({ type: 'MODIFIED', object: claim('c', ['p-1']) }, undefined);
    expect(byClaim(d, 'c')).to.equal('job-1');
    d.onClaimEvent({ type: 'MODIFIED', object: claim('c', []) }, undefined);
    expect([byClaim(d, 'c'), d.reservedClaims]).to.deep.equal([undefined, 0]);
    d.onClaimEvent({ type: 'MODIFIED', object: claim('c', ['p-0']) }, undefined);
    d.onClaimEvent({ type: 'DELETED', object: claim('c', ['p-0']) }, undefined);
    expect([byClaim(d, 'c'), d.reservedClaims]).to.deep.equal([undefined, 0]);
    // Consumers that are not pods are no pods.
    d.onClaimEvent({ type: 'ADDED', object: { metadata: { name: 'x', namespace: 'ml' }, status: { reservedFor: [{ resource: 'jobsets', name: 'p-0' }] } } }, undefined);
    expect(byClaim(d, 'x')).to.equal(undefined);
  });

  it('replaces its claims with a SYNC: of every namespace, of one namespace, or page by page', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [claimPod('p-0', 'job-0'), { ...claimPod('q-0', 'job-q'), metadata: { name: 'q-0', namespace: 'cv', uid: 'uid-q-0' } }] }, undefined);
    d.onClaimEvent({ type: 'SYNC', items: [claim('old', ['p-0']), claim('cv-claim', ['q-0'], 'cv')] }, undefined);
    d.onClaimEvent({ type: 'SYNC', items: [claim('new', ['p-0'])] }, 'ml');
    expect([byClaim(d, 'old'), byClaim(d, 'new'), byClaim(d, 'cv-claim', 'cv')]).to.deep.equal([undefined, 'job-0', 'uid-q-0']);
    d.onClaimEvent({ type: 'PAGE', items: [claim('paged', ['p-0'])], first: true }, undefined);
    expect(byClaim(d, 'new')).to.equal('job-0');
    d.onClaimEvent({ type: 'SYNC', items: [], paged: true }, undefined);
    expect([byClaim(d, 'new'), byClaim(d, 'cv-claim', 'cv'), byClaim(d, 'paged'), d.reservedClaims]).to.deep.equal([undefined, undefined, 'job-0', 1]);
  });
});
