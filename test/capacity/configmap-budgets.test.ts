import { expect } from 'chai';
import { ConfigMapBudgets, type ConfigMap } from '../../src/capacity/configmap-budgets.js';

const yaml = (organization: string, allocated: number) => `organization_id: ${organization}\nallocated_gpu_hours: ${allocated}\n`;

function configMap(name: string, text: string | undefined, resourceVersion: string): ConfigMap {
  return { metadata: { name, namespace: 'gpu-system', resourceVersion }, data: text === undefined ? {} : { 'capacity.yaml': text } };
}

function recordingLogger() {
  const lines: { level: string; msg: string | undefined; obj: Record<string, unknown> }[] = [];
  return {
    lines,
    info: (obj: object, msg?: string) => lines.push({ level: 'info', msg, obj: obj as Record<string, unknown> }),
    warn: (obj: object, msg?: string) => lines.push({ level: 'warn', msg, obj: obj as Record<string, unknown> }),
  };
}

describe('capacity ConfigMaps → budgets', () => {
  it('takes each organization\'s budget from the listed ConfigMaps and is synced after the first list', () => {
    const budgets = new ConfigMapBudgets({ key: 'capacity.yaml', logger: recordingLogger() });
    expect(budgets.synced).to.equal(false);
    budgets.onEvent({ type: 'SYNC', items: [configMap('a', yaml('acme', 10), '1'), configMap('b', yaml('globex', 20), '2')] });
    expect(budgets.synced).to.equal(true);
    expect(budgets.budgetFor('acme')?.allocatedGpuHours).to.equal(10);
    expect(budgets.budgetFor('globex')?.period).to.equal('month');
    expect(budgets.budgetFor('initech')).to.equal(undefined);
  });

  it('keeps the last valid version of a ConfigMap whose edit is invalid, logs it once and reports it', () => {
    const logger = recordingLogger();
    const budgets = new ConfigMapBudgets({ key: 'capacity.yaml', logger });
    budgets.onEvent({ type: 'ADDED', object: configMap('a', yaml('acme', 10), '1') });
    budgets.onEvent({ type: 'MODIFIED', object: configMap('a', 'organization_id: acme\nallocated_gpu_hours: lots\n', '2') });
    expect(budgets.budgetFor('acme')?.allocatedGpuHours).to.equal(10);
    const [problem] = budgets.problems();
    expect(problem).to.include({ configMap: 'gpu-system/a', reason: 'invalid' });
    expect(problem?.resourceVersion).to.equal('2');
    expect(problem?.problem).to.match(/^Cannot parse capacity.yaml of ConfigMap gpu-system\/a: .*allocated_gpu_hours/);
    // A relist delivers the same version again: not logged twice.
    budgets.onEvent({ type: 'SYNC', items: [configMap('a', 'organization_id: acme\nallocated_gpu_hours: lots\n', '2')] });
    expect(logger.lines.filter((l) => l.msg === 'capacity ConfigMap rejected')).to.have.length(1);
    budgets.onEvent({ type: 'MODIFIED', object: configMap('a', yaml('acme', 30), '3') });
    expect(budgets.budgetFor('acme')?.allocatedGpuHours).to.equal(30);
    expect(budgets.problems()).to.deep.equal([]);
  });

  it('reports a ConfigMap without the capacity.yaml key, which budgets nothing', () => {
    const budgets = new ConfigMapBudgets({ key: 'capacity.yaml', logger: recordingLogger() });
    budgets.onEvent({ type: 'SYNC', items: [configMap('a', undefined, '1')] });
    expect(budgets.budgets()).to.deep.equal([]);
    expect(budgets.problems()).to.deep.equal([{ configMap: 'gpu-system/a', reason: 'missing_key', problem: 'ConfigMap gpu-system/a has no "capacity.yaml" key', resourceVersion: '1' }]);
  });

  it('lets the first ConfigMap by name win an organization claimed twice, until it is deleted', () => {
    const budgets = new ConfigMapBudgets({ key: 'capacity.yaml', logger: recordingLogger() });
    budgets.onEvent({ type: 'SYNC', items: [configMap('b', yaml('acme', 20), '2'), configMap('a', yaml('acme', 10), '1')] });
    expect(budgets.budgetFor('acme')?.allocatedGpuHours).to.equal(10);
    expect(budgets.problems().map((p) => p.reason)).to.deep.equal(['duplicate_organization']);
    expect(budgets.problems().map((p) => p.problem)).to.deep.equal([
      'ConfigMap gpu-system/b: organization "acme" is already budgeted by ConfigMap gpu-system/a; this one is ignored',
    ]);
    budgets.onEvent({ type: 'DELETED', object: configMap('a', yaml('acme', 10), '1') });
    expect(budgets.budgetFor('acme')?.allocatedGpuHours).to.equal(20);
    expect(budgets.problems()).to.deep.equal([]);
  });

  it('drops budgets of ConfigMaps deleted or missing from a relist, and tells its listeners', () => {
    const budgets = new ConfigMapBudgets({ key: 'capacity.yaml', logger: recordingLogger() });
    let changes = 0;
    budgets.onChange(() => (changes += 1));
    budgets.onEvent({ type: 'SYNC', items: [configMap('a', yaml('acme', 10), '1'), configMap('b', yaml('globex', 20), '2')] });
    budgets.onEvent({ type: 'SYNC', items: [configMap('b', yaml('globex', 20), '2')] });
    expect(budgets.budgetFor('acme')).to.equal(undefined);
    budgets.onEvent({ type: 'DELETED', object: configMap('b', yaml('globex', 20), '2') });
    expect(budgets.budgets()).to.deep.equal([]);
    expect(changes).to.equal(3);
  });
});
