// GPU nodes and pods for the fleet's tests on the simulated API: the gpu-sharing fixture nodes under
// other names, instance types and states, and pods bound to them.
import type { KubeObject } from '../../sim/kube-api/resources.js';
import { nodeFixture } from '../fixtures/kubernetes/kubernetes-fixtures.js';

/** A fixture node under another name and instance type, with its status and spec changed. */
export function nodeFrom(file: string, name: string, instanceType: string, change: { unschedulable?: boolean; ready?: 'True' | 'False'; allocatable?: Record<string, string> } = {}): KubeObject {
  const fixture = nodeFixture(`gpu-sharing/${file}`);
  const { resourceVersion: _rv, uid: _uid, ...metadata } = fixture.metadata ?? {};
  const status = fixture.status ?? {};
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { ...metadata, name, labels: { ...metadata.labels, 'kubernetes.io/hostname': name, 'node.kubernetes.io/instance-type': instanceType } },
    spec: change.unschedulable === true ? { unschedulable: true } : {},
    status: {
      ...status,
      allocatable: { ...status.allocatable, ...change.allocatable },
      conditions: (status.conditions ?? []).map((condition) => (condition.type === 'Ready' && change.ready !== undefined ? { ...condition, status: change.ready } : condition)),
    },
  } as KubeObject;
}

export function podOn(namespace: string, name: string, node: string, resources: Record<string, string>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: { nodeName: node, containers: [{ name: 'main', image: 'trainer', resources: { limits: resources, requests: resources } }] },
    status,
  };
}
