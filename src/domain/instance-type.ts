// A node's instance type as workloads and the fleet both name it: its instance-type label, else its
// GPU product label, else `unknown` (also for a node not known), each key as configured.
import { UNKNOWN } from './workload.js';

/** The label keys read, as configured (label_instance_type, label_gpu_product). */
export interface InstanceTypeKeys {
  instanceType: string;
  gpuProduct: string;
}

/** A non-empty label value, else undefined (an empty label means "not set"). */
function labelValue(labels: Readonly<Record<string, string | undefined>> | undefined, key: string): string | undefined {
  const value = labels?.[key];
  return value === undefined || value.trim() === '' ? undefined : value;
}

export function instanceTypeFromLabels(labels: Readonly<Record<string, string | undefined>> | undefined, keys: InstanceTypeKeys): string {
  return labelValue(labels, keys.instanceType) ?? labelValue(labels, keys.gpuProduct) ?? UNKNOWN;
}
