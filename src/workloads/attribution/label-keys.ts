// The labels and annotations attribution reads (labels.ts), as configured: their own module, so that
// what reads them needs neither the mappers' context nor anything it imports.

/** Label and annotation keys read for attribution (DECISIONS "Where a workload comes from"). */
export interface LabelKeys {
  initiative: string;
  /** Namespace annotation listing the initiatives its objects may name themselves (initiative_source `namespace`). */
  allowedInitiatives: string;
  organization: string;
  submittedBy: string;
  managed: string;
  kueueQueueName: string;
  instanceType: string;
  gpuProduct: string;
  /** Node label of the capacity type (label_capacity_type); '': the well-known labels (domain/capacity-type.ts). */
  capacityType: string;
}

export const DEFAULT_LABEL_KEYS: Readonly<LabelKeys> = Object.freeze({
  initiative: 'gpucap.io/initiative',
  allowedInitiatives: 'gpucap.io/allowed-initiatives',
  organization: 'gpucap.io/organization',
  submittedBy: 'gpucap.io/submitted-by',
  managed: 'gpucap.io/managed',
  kueueQueueName: 'kueue.x-k8s.io/queue-name',
  instanceType: 'node.kubernetes.io/instance-type',
  gpuProduct: 'nvidia.com/gpu.product',
  capacityType: '',
});
