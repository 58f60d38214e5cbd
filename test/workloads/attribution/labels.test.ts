// Attribution precedence: one table per field (DECISIONS "Where a workload comes from").
import { expect } from 'chai';
import type { Namespace, Node, ObjectMeta } from '../../../src/k8s/objects/k8s-types.js';
import { initiativeOf, instanceTypeOf, isManagedOf, namespaceAllows, organizationOf, submittedByOf } from '../../../src/workloads/attribution/labels.js';
import { DEFAULT_LABEL_KEYS, type LabelKeys } from '../../../src/workloads/attribution/label-keys.js';
import { aMeta, aNamespace, aNode } from '../fixtures.js';

const keys = DEFAULT_LABEL_KEYS;
const custom: LabelKeys = { ...DEFAULT_LABEL_KEYS, initiative: 'example.com/project', submittedBy: 'example.com/owner', managed: 'example.com/managed', instanceType: 'example.com/sku' };

describe('workloads: initiative_id', () => {
  const rows: { name: string; meta: ObjectMeta; namespace?: Namespace; keys?: LabelKeys; expected: string }[] = [
    { name: 'the object label wins over the namespace label', meta: aMeta({ labels: { 'gpucap.io/initiative': 'llm' } }), namespace: aNamespace({ 'gpucap.io/initiative': 'vision' }), expected: 'llm' },
    { name: 'the namespace label when the object has none', meta: aMeta(), namespace: aNamespace({ 'gpucap.io/initiative': 'vision' }), expected: 'vision' },
    { name: 'an empty object label is ignored', meta: aMeta({ labels: { 'gpucap.io/initiative': '' } }), namespace: aNamespace({ 'gpucap.io/initiative': 'vision' }), expected: 'vision' },
    { name: 'the namespace name when neither has the label', meta: aMeta(), namespace: aNamespace(), expected: 'team-a' },
    { name: 'the namespace name when the namespace is not known', meta: aMeta({ namespace: 'team-b' }), expected: 'team-b' },
    { name: 'a configured key', meta: aMeta({ labels: { 'example.com/project': 'p1', 'gpucap.io/initiative': 'llm' } }), keys: custom, expected: 'p1' },
  ];
  const budgets = { initiativeOf: (organizationId: string, namespace: string) => (organizationId === 'acme' && namespace === 'team-a' ? 'mapped' : undefined) };
  it('the capacity budget\'s namespace mapping of the organization comes before the namespace name', () => {
    expect(initiativeOf(aMeta(), { keys, namespace: aNamespace(), organizationId: 'acme', namespaceInitiatives: budgets })).to.equal('mapped');
    expect(initiativeOf(aMeta(), { keys, namespace: aNamespace(), organizationId: 'globex', namespaceInitiatives: budgets })).to.equal('team-a');
  });
  it('labels on the object or the namespace come before the capacity mapping', () => {
    expect(initiativeOf(aMeta({ labels: { 'gpucap.io/initiative': 'llm' } }), { keys, namespace: aNamespace(), organizationId: 'acme', namespaceInitiatives: budgets })).to.equal('llm');
    expect(initiativeOf(aMeta(), { keys, namespace: aNamespace({ 'gpucap.io/initiative': 'vision' }), organizationId: 'acme', namespaceInitiatives: budgets })).to.equal('vision');
  });
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      expect(initiativeOf(row.meta, { keys: row.keys ?? keys, namespace: row.namespace })).to.equal(row.expected);
    });
  }
});

describe('workloads: initiative_id when the namespace decides (initiative_source: namespace)', () => {
  const llm = aMeta({ labels: { 'gpucap.io/initiative': 'llm' } });
  const vision = (annotations?: Record<string, string>): Namespace => ({
    metadata: { name: 'team-vision', labels: { 'gpucap.io/initiative': 'vision' }, ...(annotations === undefined ? {} : { annotations }) },
  });
  const allowing = (list: string): Namespace => vision({ 'gpucap.io/allowed-initiatives': list });
  const budgets = { initiativeOf: (_organizationId: string, namespace: string) => (namespace === 'team-a' ? 'mapped' : undefined) };
  const inNamespaceMode = (meta: ObjectMeta, namespace?: Namespace, extra: { keys?: LabelKeys; organizationId?: string } = {}): string =>
    initiativeOf(meta, { keys: extra.keys ?? keys, initiativeSource: 'namespace', namespace, ...(extra.organizationId === undefined ? {} : { organizationId: extra.organizationId, namespaceInitiatives: budgets }) });

  const rows: { name: string; namespace?: Namespace; expected: string }[] = [
    { name: "the object's label is ignored without the annotation", namespace: vision(), expected: 'vision' },
    { name: 'the object\'s label counts when the annotation lists it', namespace: allowing('llm'), expected: 'llm' },
    { name: 'among others, items trimmed', namespace: allowing(' speech ,llm , vision'), expected: 'llm' },
    { name: 'empty items are ignored', namespace: allowing(',, llm,'), expected: 'llm' },
    { name: 'a list that names other initiatives does not allow it', namespace: allowing('speech, llm-research'), expected: 'vision' },
    { name: 'the whole list is not one item', namespace: allowing('llm speech'), expected: 'vision' },
    { name: 'a blank annotation allows nothing', namespace: allowing('  '), expected: 'vision' },
    { name: 'an unknown namespace allows nothing: its name', expected: 'team-a' },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      expect(inNamespaceMode(llm, row.namespace)).to.equal(row.expected);
    });
  }

  it('without a namespace label, the capacity mapping, then the name, beat a label it does not allow', () => {
    expect(inNamespaceMode(llm, aNamespace(), { organizationId: 'acme' })).to.equal('mapped');
    const llmInTeamB = aMeta({ namespace: 'team-b', labels: { 'gpucap.io/initiative': 'llm' } });
    expect(inNamespaceMode(llmInTeamB, aNamespace({}, 'team-b'), { organizationId: 'acme' })).to.equal('team-b');
    expect(inNamespaceMode(aMeta(), aNamespace({ 'gpucap.io/initiative': 'vision' }), { organizationId: 'acme' })).to.equal('vision');
  });

  it('an allowed object label beats the namespace label and the capacity mapping', () => {
    const allowed = { metadata: { name: 'team-a', annotations: { 'gpucap.io/allowed-initiatives': 'llm' } } };
    expect(inNamespaceMode(llm, allowed, { organizationId: 'acme' })).to.equal('llm');
  });

  it('reads the configured keys', () => {
    const own: LabelKeys = { ...keys, initiative: 'example.com/project', allowedInitiatives: 'example.com/projects' };
    const meta = aMeta({ labels: { 'example.com/project': 'p1' } });
    const namespace = (annotations: Record<string, string>): Namespace => ({ metadata: { name: 'team-a', annotations } });
    expect(inNamespaceMode(meta, namespace({ 'example.com/projects': 'p1' }), { keys: own })).to.equal('p1');
    expect(inNamespaceMode(meta, namespace({ 'gpucap.io/allowed-initiatives': 'p1' }), { keys: own })).to.equal('team-a');
  });

  it('leaves the default (labels) as it was: the object label wins, whatever the annotation', () => {
    expect(initiativeOf(llm, { keys, namespace: vision() })).to.equal('llm');
    expect(initiativeOf(llm, { keys, initiativeSource: 'labels', namespace: allowing('speech') })).to.equal('llm');
  });

  it('namespaceAllows matches whole items only', () => {
    expect(namespaceAllows(allowing('llm'), keys, 'll')).to.equal(false);
    expect(namespaceAllows(allowing('llm'), keys, '')).to.equal(false);
    expect(namespaceAllows(allowing(' , '), keys, '')).to.equal(false);
    expect(namespaceAllows(allowing('LLM'), keys, 'llm')).to.equal(false);
  });
});

describe('workloads: organization_id', () => {
  const rows: { name: string; namespace?: Namespace; clusterOrganizationId?: string; expected: string }[] = [
    { name: 'the namespace label wins over the cluster organization', namespace: aNamespace({ 'gpucap.io/organization': 'acme' }), clusterOrganizationId: 'globex', expected: 'acme' },
    { name: "the cluster's organization when the namespace has no label", namespace: aNamespace(), clusterOrganizationId: 'globex', expected: 'globex' },
    { name: 'the default organization when neither is set', namespace: aNamespace(), expected: 'default-org' },
    { name: 'the default organization when the namespace is not known', expected: 'default-org' },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      const got = organizationOf({ keys, namespace: row.namespace, clusterOrganizationId: row.clusterOrganizationId, defaultOrganizationId: 'default-org' });
      expect(got).to.equal(row.expected);
    });
  }
});

describe('workloads: submitted_by', () => {
  const rows: { name: string; meta: ObjectMeta; keys?: LabelKeys; expected: string }[] = [
    { name: 'the label', meta: aMeta({ labels: { 'gpucap.io/submitted-by': 'alice' }, annotations: { 'gpucap.io/submitted-by': 'bob' } }), expected: 'alice' },
    { name: 'the annotation when there is no label', meta: aMeta({ annotations: { 'gpucap.io/submitted-by': 'bob@example.com' } }), expected: 'bob@example.com' },
    { name: 'unknown when neither is set', meta: aMeta(), expected: 'unknown' },
    { name: 'a configured key', meta: aMeta({ annotations: { 'example.com/owner': 'carol' } }), keys: custom, expected: 'carol' },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      expect(submittedByOf(row.meta, row.keys ?? keys)).to.equal(row.expected);
    });
  }
});

describe('workloads: is_managed', () => {
  const queue = { 'kueue.x-k8s.io/queue-name': 'gpu-queue' };
  const rows: { name: string; labels: Record<string, string>; keys?: LabelKeys; expected: boolean }[] = [
    { name: 'managed label true', labels: { 'gpucap.io/managed': 'true' }, expected: true },
    { name: 'managed label false wins over a Kueue queue', labels: { 'gpucap.io/managed': 'false', ...queue }, expected: false },
    { name: 'managed label in another case', labels: { 'gpucap.io/managed': 'True' }, expected: true },
    { name: 'a Kueue queue label without the managed label', labels: queue, expected: true },
    { name: 'an unrecognised managed value falls back to the Kueue label', labels: { 'gpucap.io/managed': 'yes', ...queue }, expected: true },
    { name: 'an unrecognised managed value without Kueue', labels: { 'gpucap.io/managed': 'yes' }, expected: false },
    { name: 'no labels', labels: {}, expected: false },
    { name: 'a configured key', labels: { 'example.com/managed': 'true' }, keys: custom, expected: true },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      expect(isManagedOf(aMeta({ labels: row.labels }), row.keys ?? keys)).to.equal(row.expected);
    });
  }
});

describe('workloads: instance_type', () => {
  const rows: { name: string; node?: Node; keys?: LabelKeys; expected: string }[] = [
    { name: 'the instance-type label wins over the GPU product', node: aNode({ 'node.kubernetes.io/instance-type': 'p5.48xlarge', 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' }), expected: 'p5.48xlarge' },
    { name: 'the GPU product when there is no instance type', node: aNode({ 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' }), expected: 'NVIDIA-H100-80GB-HBM3' },
    { name: 'unknown when the node has neither', node: aNode(), expected: 'unknown' },
    { name: 'unknown when the node is not known', expected: 'unknown' },
    { name: 'a configured key', node: aNode({ 'example.com/sku': 'on-prem-a100', 'node.kubernetes.io/instance-type': 'x' }), keys: custom, expected: 'on-prem-a100' },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      expect(instanceTypeOf(row.node, row.keys ?? keys)).to.equal(row.expected);
    });
  }
});
