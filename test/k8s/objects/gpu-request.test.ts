// Effective GPU request of a pod spec: max(largest init container, app containers + sidecars).
import { expect } from 'chai';
import { effectiveGpuRequest, isGpuResource, parseGpuQuantity } from '../../../src/k8s/objects/gpu-request.js';
import type { PodSpec } from '../../../src/k8s/objects/k8s-types.js';
import { aContainer, gpuContainer } from '../../workloads/fixtures.js';

const sidecar = (n: number): ReturnType<typeof aContainer> => aContainer({ limits: { 'nvidia.com/gpu': n }, restartPolicy: 'Always' });

describe('workloads: effective GPU request', () => {
  const rows: { name: string; spec: PodSpec | undefined; gpuResources?: string[]; expected: number }[] = [
    { name: 'no spec requests no GPU', spec: undefined, expected: 0 },
    { name: 'a pod with only CPU requests no GPU', spec: { containers: [aContainer({ requests: { cpu: '2', memory: '1Gi' } })] }, expected: 0 },
    { name: 'one container with a GPU limit only (requests default to limits)', spec: { containers: [gpuContainer(2)] }, expected: 2 },
    { name: 'a request given as a number', spec: { containers: [aContainer({ requests: { 'nvidia.com/gpu': 3 } })] }, expected: 3 },
    { name: 'the request wins over the limit when both are set', spec: { containers: [aContainer({ requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '4' } })] }, expected: 1 },
    { name: 'app containers add up', spec: { containers: [gpuContainer(2), gpuContainer('3')] }, expected: 5 },
    { name: 'a larger init container sets the request', spec: { initContainers: [gpuContainer(8)], containers: [gpuContainer(2), gpuContainer(2)] }, expected: 8 },
    { name: 'a smaller init container does not add', spec: { initContainers: [gpuContainer(1)], containers: [gpuContainer(4)] }, expected: 4 },
    { name: 'only the largest init container counts (they run one at a time)', spec: { initContainers: [gpuContainer(3), gpuContainer(2)], containers: [] }, expected: 3 },
    { name: 'a sidecar init container adds to the app containers', spec: { initContainers: [sidecar(1)], containers: [gpuContainer(2)] }, expected: 3 },
    { name: 'an init container after a sidecar runs beside it', spec: { initContainers: [sidecar(1), gpuContainer(4)], containers: [gpuContainer(2)] }, expected: 5 },
    { name: 'an init container before a sidecar runs alone', spec: { initContainers: [gpuContainer(4), sidecar(1)], containers: [gpuContainer(2)] }, expected: 4 },
    { name: 'a MIG slice counts as a GPU', spec: { containers: [aContainer({ limits: { 'nvidia.com/mig-1g.10gb': '2' } })] }, expected: 2 },
    { name: 'MIG slices and whole GPUs add up', spec: { containers: [aContainer({ limits: { 'nvidia.com/gpu': '1', 'nvidia.com/mig-3g.40gb': '1' } })] }, expected: 2 },
    {
      name: 'the init/app maximum is taken per resource, then summed',
      spec: { initContainers: [gpuContainer(4)], containers: [gpuContainer(1), aContainer({ limits: { 'nvidia.com/mig-1g.10gb': 2 } })] },
      expected: 6,
    },
    { name: 'other vendors are not counted by default', spec: { containers: [aContainer({ limits: { 'amd.com/gpu': '2' } })] }, expected: 0 },
    { name: 'a configured resource name is counted', spec: { containers: [aContainer({ limits: { 'amd.com/gpu': '2' } })] }, gpuResources: ['amd.com/gpu'], expected: 2 },
    { name: 'a configured list replaces the defaults', spec: { containers: [gpuContainer(2)] }, gpuResources: ['amd.com/gpu'], expected: 0 },
    { name: 'a fractional or malformed quantity counts as 0', spec: { containers: [gpuContainer('1.5'), gpuContainer('x'), gpuContainer(-1)] }, expected: 0 },
  ];
  for (const row of rows) {
    it(`${row.name}: ${row.expected}`, () => {
      expect(effectiveGpuRequest(row.spec, row.gpuResources)).to.equal(row.expected);
    });
  }
});

describe('workloads: GPU resource names', () => {
  const rows: { name: string; patterns: string[]; expected: boolean }[] = [
    { name: 'nvidia.com/gpu', patterns: ['nvidia.com/gpu'], expected: true },
    { name: 'nvidia.com/gpu.shared', patterns: ['nvidia.com/gpu'], expected: false },
    { name: 'nvidia.com/mig-1g.5gb', patterns: ['nvidia.com/mig-*'], expected: true },
    { name: 'nvidia.com/migration', patterns: ['nvidia.com/mig-*'], expected: false },
  ];
  for (const row of rows) {
    it(`${row.name} against ${row.patterns.join(',')} is ${row.expected}`, () => {
      expect(isGpuResource(row.name, row.patterns)).to.equal(row.expected);
    });
  }
});

describe('workloads: GPU quantities', () => {
  const rows: { quantity: string | number | undefined; expected: number }[] = [
    { quantity: '2', expected: 2 },
    { quantity: ' 4 ', expected: 4 },
    { quantity: 2, expected: 2 },
    { quantity: undefined, expected: 0 },
    { quantity: '500m', expected: 0 },
    { quantity: 0.5, expected: 0 },
  ];
  for (const row of rows) {
    it(`${JSON.stringify(row.quantity)} parses as ${row.expected}`, () => {
      expect(parseGpuQuantity(row.quantity)).to.equal(row.expected);
    });
  }
});
