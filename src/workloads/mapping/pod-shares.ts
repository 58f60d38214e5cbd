// The share of a GPU each pod holds on its node, as the mappers ask it: the node's labels come from
// the label cache, the rules from src/k8s/gpus/.
import type { GpuHoursBasis } from '../../domain/gpu-sharing.js';
import type { GpuAsk } from '../../k8s/gpus/gpu-ask.js';
import { podGpuShare, type GpuShare, type ShareSettings } from '../../k8s/gpus/pod-share.js';
import type { Node } from '../../k8s/objects/k8s-types.js';
import type { PodFacts } from '../facts/pod-facts.js';

export interface PodShares {
  readonly basis: GpuHoursBasis;
  /** What the pod holds on the node it is bound to (none yet: its ask alone). */
  ofPod(pod: PodFacts): GpuShare;
  /** What an ask holds on a node, by name (null or unknown: its ask alone). */
  ofAsk(ask: GpuAsk, nodeName: string | null | undefined): GpuShare;
}

export interface GpuCounting {
  basis: GpuHoursBasis;
  settings: ShareSettings;
}

export function podShares(nodes: { get(name: string | null | undefined): Node | undefined }, counting: GpuCounting): PodShares {
  const ofAsk = (ask: GpuAsk, nodeName: string | null | undefined): GpuShare =>
    podGpuShare(ask, nodes.get(nodeName)?.metadata?.labels, counting.settings);
  return { basis: counting.basis, ofAsk, ofPod: (pod) => ofAsk(pod.ask, pod.nodeName) };
}
