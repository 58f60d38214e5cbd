// Pods owned by a Job belong to that Job's workload; every other GPU pod is a workload of its own.
import type { ObjectMeta } from './k8s-types.js';

/** The uid of the batch Job owning the object, else null. */
export function jobOwnerUid(meta: ObjectMeta | undefined): string | null {
  const owner = meta?.ownerReferences?.find(
    (ref) => ref.kind === 'Job' && (ref.apiVersion === undefined || ref.apiVersion.startsWith('batch/')),
  );
  return owner?.uid ?? null;
}
