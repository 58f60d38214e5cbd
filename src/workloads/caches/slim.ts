// What the indexer keeps of a Namespace or Node: its name, the labels attribution reads (the
// configured keys, and the capacity type's well-known ones while none is configured), the annotation
// by which a Namespace allows initiatives its objects may name (attribution/labels.ts) and, of a Node,
// GFD's labels that say how its GPUs are shared (src/k8s/gpus/node-gpus.ts), nothing else. Pods and
// Jobs are kept as flat records instead (facts/facts-projection.ts).
import { capacityTypeLabelKeys } from '../../domain/capacity-type.js';
import { isGpuShareLabel } from '../../k8s/gpus/node-gpus.js';
import type { ObjectMeta, StringMap } from '../../k8s/objects/k8s-types.js';
import type { LabelKeys } from '../attribution/label-keys.js';
import type { WithMetadata } from './seen.js';

/** Label keys a Namespace or Node is read for. */
function contextLabelKeys(keys: Readonly<LabelKeys>): readonly string[] {
  return [keys.initiative, keys.organization, keys.instanceType, keys.gpuProduct, ...capacityTypeLabelKeys(keys.capacityType)];
}

/** The entries of `map` under `keys`, and those whose key `alsoKept` accepts. */
function pick(map: StringMap | undefined, keys: readonly string[], alsoKept?: (key: string) => boolean): StringMap | undefined {
  if (map === undefined) return undefined;
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    const value = map[key];
    if (value !== undefined) (kept ??= {})[key] = value;
  }
  if (alsoKept === undefined) return kept;
  for (const key in map) {
    if (alsoKept(key) && !keys.includes(key)) (kept ??= {})[key] = map[key] as string;
  }
  return kept;
}

/** The slim copy of Namespaces and Nodes, for the label keys the service is configured with. */
export function contextSlimmer(keys: Readonly<LabelKeys>): (object: WithMetadata) => WithMetadata {
  const labelKeys = contextLabelKeys(keys);
  // Kept whatever initiative_source says: it is one short value, and it is absent from most Namespaces.
  const annotationKeys = [keys.allowedInitiatives];
  return (object) => {
    const meta = object.metadata;
    if (meta === undefined) return {};
    const slim: ObjectMeta = { name: meta.name, labels: pick(meta.labels, labelKeys, isGpuShareLabel) };
    const annotations = pick(meta.annotations, annotationKeys);
    if (annotations !== undefined) slim.annotations = annotations;
    return { metadata: slim };
  };
}
