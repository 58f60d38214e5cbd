// The demo's over-committed pool: two g6.xlarge nodes in gpu-west with one NVIDIA L4 each, and acme's
// budget for them, 2,000 GPU-hours a month. Two GPUs give at most 2 × 744 = 1,488 GPU-hours in a month,
// so the budget promises GPU-hours its hardware cannot give, which GET /v1/capacity reports
// (over_committed) and the console marks. No Jobs run there.
import type { KubeStore } from '../kube-api/store.js';
import { capacityTypeLabels } from './prices.js';

export const L4_CLUSTER = 'gpu-west';
export const L4_NODES = ['gpu-west-l4-00', 'gpu-west-l4-01'] as const;
const INSTANCE_TYPE = 'g6.xlarge';

/** The pool's line in acme's capacity.yaml. */
export const L4_POOL_LINE = `  - { pool_id: l4, name: L4 inference, allocated_gpu_hours: 2000, instance_types: [${INSTANCE_TYPE}] }`;

export function seedL4Nodes(store: KubeStore): void {
  for (const name of L4_NODES) {
    store.create('nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: { 'node.kubernetes.io/instance-type': INSTANCE_TYPE, 'nvidia.com/gpu.product': 'NVIDIA-L4', 'nvidia.com/gpu.count': '1', ...capacityTypeLabels(name) },
      },
      status: { capacity: { 'nvidia.com/gpu': '1' }, allocatable: { 'nvidia.com/gpu': '1' } },
    });
  }
}
