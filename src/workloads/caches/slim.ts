// What the indexer keeps of a Namespace or Node: its name and the labels attribution reads (the
// configured keys) and, of a Node, GFD's labels that say how its GPUs are shared
// (src/k8s/gpus/node-gpus.ts), nothing else. Pods and Jobs are kept as flat records instead (facts/facts-projection.ts).
import { isGpuShareLabel } from '../../k8s/gpus/node-gpus.js';
import type { StringMap } from '../../k8s/objects/k8s-types.js';
import type { LabelKeys } from '../attribution/label-keys.js';
import type { WithMetadata } from './seen.js';

/** Label keys a Namespace or Node is read for. */
function contextLabelKeys(keys: Readonly<LabelKeys>): readonly string[] {
  return [keys.initiative, keys.organization, keys.instanceType, keys.gpuProduct];
}

function pick(map: StringMap | undefined, keys: readonly string[]): StringMap | undefined {
  if (map === undefined) return undefined;
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    const value = map[key];
    if (value !== undefined) (kept ??= {})[key] = value;
  }
  for (const key in map) {
    if (isGpuShareLabel(key) && !keys.includes(key)) (kept ??= {})[key] = map[key] as string;
  }
  return kept;
}

/** The slim copy of Namespaces and Nodes, for the label keys the service is configured with. */
export function contextSlimmer(keys: Readonly<LabelKeys>): (object: WithMetadata) => WithMetadata {
  const labelKeys = contextLabelKeys(keys);
  return (object) => {
    const meta = object.metadata;
    if (meta === undefined) return {};
    return { metadata: { name: meta.name, labels: pick(meta.labels, labelKeys) } };
  };
}
