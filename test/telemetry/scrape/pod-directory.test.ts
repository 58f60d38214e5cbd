import { expect } from 'chai';
import type { Pod } from '../../../src/k8s/objects/k8s-types.js';
import type { IgnoredExporter } from '../../../src/telemetry/scrape/exporter-pods.js';
import { PodDirectory } from '../../../src/telemetry/scrape/pod-directory.js';
import { parseSelectors } from '../../../src/telemetry/scrape/exporter-target.js';

const DISCOVERY = {
  selectors: ['app=nvidia-dcgm-exporter', 'app.kubernetes.io/name=dcgm-exporter'], namespaces: ['gpu-operator', 'gpucap'], port: 9400, path: '/metrics',
};

function directory(onExporterIgnored?: (exporter: IgnoredExporter) => void): PodDirectory {
  return new PodDirectory('east', {
    discovery: DISCOVERY, selectors: parseSelectors(DISCOVERY.selectors), gpuResources: ['nvidia.com/gpu', 'nvidia.com/mig-*'],
    ...(onExporterIgnored === undefined ? {} : { onExporterIgnored }),
  });
}

function gpuPod(namespace: string, name: string, options: { jobUid?: string; resource?: string; node?: string | null } = {}): Pod {
  return {
    metadata: {
      name, namespace, uid: `uid-${name}`,
      ...(options.jobUid ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: options.jobUid, controller: true }] } : {}),
    },
    spec: {
      ...(options.node === null ? {} : { nodeName: options.node ?? 'n1' }),
      containers: [{ name: 'main', resources: { limits: { [options.resource ?? 'nvidia.com/gpu']: '1' } } }],
    },
    status: { phase: 'Running' },
  };
}

function exporterPod(name: string, options: { ip?: string; phase?: string; labels?: Record<string, string>; deleting?: boolean; namespace?: string; node?: string | null } = {}): Pod {
  return {
    metadata: {
      name, namespace: options.namespace ?? 'gpu-operator', uid: `uid-${name}`, labels: options.labels ?? { app: 'nvidia-dcgm-exporter' },
      ...(options.deleting ? { deletionTimestamp: '2026-11-20T00:00:00Z' } : {}),
    },
    spec: { ...(options.node === null ? {} : { nodeName: options.node ?? `node-${name}` }), containers: [{ name: 'exporter' }] },
    status: { phase: options.phase ?? 'Running', ...(options.ip === undefined ? { podIP: '10.0.0.7' } : options.ip === '' ? {} : { podIP: options.ip }) },
  };
}

describe('telemetry pod directory (exporters and GPU pods of one cluster)', () => {
  it('maps a GPU pod to its Job\'s workload, a bare GPU pod to itself, and ignores pods without GPUs', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [gpuPod('llm', 'train-0', { jobUid: 'job-1' }), gpuPod('llm', 'solo'), gpuPod('llm', 'mig', { resource: 'nvidia.com/mig-1g.10gb' })] }, undefined);
    d.onPodEvent({ type: 'ADDED', object: { metadata: { name: 'cpu', namespace: 'llm', uid: 'u' }, spec: { containers: [{ name: 'c' }] } } }, undefined);
    expect(d.workloadOf('llm', 'train-0')).to.equal('job-1');
    expect(d.workloadOf('llm', 'solo')).to.equal('uid-solo');
    expect(d.workloadOf('llm', 'mig')).to.equal('uid-mig');
    expect(d.workloadOf('llm', 'cpu')).to.equal(undefined);
    d.onPodEvent({ type: 'DELETED', object: gpuPod('llm', 'solo') }, undefined);
    expect(d.workloadOf('llm', 'solo')).to.equal(undefined);
  });

  it('finds running exporter pods by either selector and scrapes them at their pod IP', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [exporterPod('a'), exporterPod('b', { ip: 'fd00::12', labels: { 'app.kubernetes.io/name': 'dcgm-exporter' } })] }, undefined);
    expect([...d.exporters()]).to.deep.equal([
      { key: 'east/gpu-operator/a', clusterId: 'east', namespace: 'gpu-operator', pod: 'a', node: 'node-a', url: 'http://10.0.0.7:9400/metrics' },
      { key: 'east/gpu-operator/b', clusterId: 'east', namespace: 'gpu-operator', pod: 'b', node: 'node-b', url: 'http://[fd00::12]:9400/metrics' },
    ]);
  });

  it('scrapes exporter pods of the trusted namespaces only, and reports each other one once while it lasts', () => {
    const ignored: IgnoredExporter[] = [];
    const d = directory((exporter) => ignored.push(exporter));
    const forged = exporterPod('fake', { namespace: 'team-a', ip: '10.9.9.9', node: 'n1' });
    d.onPodEvent({ type: 'SYNC', items: [exporterPod('a'), exporterPod('own', { namespace: 'gpucap' }), forged] }, undefined);
    expect([...d.exporters()].map((e) => e.key)).to.deep.equal(['east/gpu-operator/a', 'east/gpucap/own']);
    const reported = { key: 'east/team-a/fake', clusterId: 'east', namespace: 'team-a', pod: 'fake', node: 'n1', podIP: '10.9.9.9', reason: 'untrusted_namespace' };
    expect(ignored).to.deep.equal([reported]);
    // Its status changes, a relist of every namespace, then of its own: still the same pod, not reported again.
    d.onPodEvent({ type: 'MODIFIED', object: forged }, undefined);
    d.onPodEvent({ type: 'SYNC', items: [exporterPod('a'), forged] }, undefined);
    d.onPodEvent({ type: 'SYNC', items: [forged] }, 'team-a');
    expect([...d.ignoredExporters()]).to.deep.equal([reported]);
    expect(ignored).to.have.length(1);
    expect(d.exporterCount).to.equal(1);
    d.onPodEvent({ type: 'SYNC', items: [] }, 'team-a');
    expect([...d.ignoredExporters()]).to.deep.equal([]);
    d.onPodEvent({ type: 'ADDED', object: forged }, undefined);
    d.onPodEvent({ type: 'DELETED', object: forged }, undefined);
    expect([...d.ignoredExporters()]).to.deep.equal([]);
    expect(ignored).to.have.length(2);
  });

  it('scrapes no exporter pod without a node (it cannot be running)', () => {
    const d = directory();
    d.onPodEvent({ type: 'ADDED', object: exporterPod('a', { node: null }) }, undefined);
    expect(d.exporterCount).to.equal(0);
  });

  it('counts a GPU pod\'s samples for its workload only from the exporter of its node', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [gpuPod('llm', 'train-0', { jobUid: 'job-1', node: null }), gpuPod('llm', 'solo', { node: 'n2' })] }, undefined);
    const reading = (name: string) => ({ pod: { namespace: 'llm', name }, claim: undefined });
    expect(d.attributionOf(reading('solo'), 'n2')).to.equal('uid-solo');
    expect(d.attributionOf(reading('solo'), 'n1')).to.deep.equal({ reason: 'other_node', pod: { namespace: 'llm', name: 'solo' }, podNode: 'n2', claim: undefined });
    // Not scheduled yet: on no exporter's node.
    expect(d.attributionOf(reading('train-0'), 'n1')).to.deep.include({ reason: 'other_node', podNode: undefined });
    d.onPodEvent({ type: 'MODIFIED', object: gpuPod('llm', 'train-0', { jobUid: 'job-1', node: 'n1' }) }, undefined);
    expect(d.attributionOf(reading('train-0'), 'n1')).to.equal('job-1');
    expect(d.attributionOf(reading('stranger'), 'n1')).to.equal(undefined);
    expect(d.gpuPods).to.equal(2);
  });

  it('follows exporter pods coming and going: pending, without IP, deleting or relabelled ones are not scraped', () => {
    const d = directory();
    d.onPodEvent({ type: 'ADDED', object: exporterPod('a', { phase: 'Pending', ip: '' }) }, undefined);
    expect(d.exporterCount).to.equal(0);
    d.onPodEvent({ type: 'MODIFIED', object: exporterPod('a') }, undefined);
    expect(d.exporterCount).to.equal(1);
    d.onPodEvent({ type: 'MODIFIED', object: exporterPod('a', { deleting: true }) }, undefined);
    expect(d.exporterCount).to.equal(0);
    d.onPodEvent({ type: 'MODIFIED', object: exporterPod('a') }, undefined);
    d.onPodEvent({ type: 'MODIFIED', object: exporterPod('a', { labels: { app: 'something-else' } }) }, undefined);
    expect(d.exporterCount).to.equal(0);
    d.onPodEvent({ type: 'ADDED', object: exporterPod('b') }, undefined);
    d.onPodEvent({ type: 'DELETED', object: exporterPod('b') }, undefined);
    expect(d.exporterCount).to.equal(0);
  });

  it('a relist of one namespace replaces only that namespace', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [exporterPod('a'), gpuPod('llm', 'train-0')] }, undefined);
    d.onPodEvent({ type: 'SYNC', items: [gpuPod('llm', 'train-1')] }, 'llm');
    expect(d.workloadOf('llm', 'train-0')).to.equal(undefined);
    expect(d.workloadOf('llm', 'train-1')).to.equal('uid-train-1');
    expect(d.exporterCount).to.equal(1);
  });

  it('counts GPU pods through changes, deletions and relists, and forgets a Job once its last pod here is gone', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [gpuPod('llm', 'a-0', { jobUid: 'job-a' }), gpuPod('llm', 'a-1', { jobUid: 'job-a' }), gpuPod('cv', 'solo')] }, undefined);
    d.onPodEvent({ type: 'MODIFIED', object: gpuPod('llm', 'a-0', { jobUid: 'job-a' }) }, undefined);
    expect(d.gpuPods).to.equal(3);
    d.onPodEvent({ type: 'MODIFIED', object: gpuPod('llm', 'a-1', { jobUid: 'job-b' }) }, undefined);
    expect([d.workloadOf('llm', 'a-0'), d.workloadOf('llm', 'a-1')]).to.deep.equal(['job-a', 'job-b']);
    d.onPodEvent({ type: 'DELETED', object: gpuPod('llm', 'a-0', { jobUid: 'job-a' }) }, undefined);
    d.onPodEvent({ type: 'MODIFIED', object: { ...gpuPod('cv', 'solo'), spec: { containers: [{ name: 'c' }] } } }, undefined);
    expect(d.gpuPods).to.equal(1);
    expect(d.workloadOf('llm', 'a-0')).to.equal(undefined);
    expect(d.workloadOf('cv', 'solo')).to.equal(undefined);
    d.onPodEvent({ type: 'SYNC', items: [gpuPod('llm', 'a-2', { jobUid: 'job-a' })] }, 'llm');
    expect(d.gpuPods).to.equal(1);
    expect([d.workloadOf('llm', 'a-1'), d.workloadOf('llm', 'a-2')]).to.deep.equal([undefined, 'job-a']);
  });

  it('takes a LIST page by page, and its pages replace the snapshot only once the LIST is complete', () => {
    const d = directory();
    d.onPodEvent({ type: 'SYNC', items: [gpuPod('llm', 'old'), exporterPod('dcgm-0')] }, undefined);
    d.onPodEvent({ type: 'PAGE', items: [gpuPod('llm', 'new-0', { jobUid: 'job-1' })], first: true }, undefined);
    d.onPodEvent({ type: 'PAGE', items: [exporterPod('dcgm-1', { ip: '10.0.0.8' })], first: false }, undefined);
    expect(d.workloadOf('llm', 'old')).to.equal('uid-old');
    d.onPodEvent({ type: 'SYNC', items: [], paged: true }, undefined);
    expect([d.workloadOf('llm', 'old'), d.workloadOf('llm', 'new-0'), d.gpuPods]).to.deep.equal([undefined, 'job-1', 1]);
    expect([...d.exporters()].map((e) => e.url)).to.deep.equal(['http://10.0.0.8:9400/metrics']);
  });

  it('refuses an exporter selector without "="', () => {
    expect(() => parseSelectors(['app'])).to.throw('Invalid exporter selector "app": expected key=value');
  });
});
