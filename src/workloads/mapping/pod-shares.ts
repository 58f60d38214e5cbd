// The share of a GPU each pod holds, as the mappers ask it: on its node for the devices it asks for
// (the node's labels come from the label cache), and from its DRA claims (caches/dra-cache.ts); the
// rules are in src/k8s/gpus/.
import type { GpuHoursBasis } from '../../domain/gpu-sharing.js';
import type { GpuAsk } from '../../k8s/gpus/gpu-ask.js';
import { addShares, NO_SHARE, podGpuShare, type GpuShare, type ShareSettings } from '../../k8s/gpus/pod-share.js';
import type { Node } from '../../k8s/objects/k8s-types.js';
import type { PodFacts } from '../facts/pod-facts.js';

export interface PodShares {
  readonly basis: GpuHoursBasis;
  /** What the pod holds on the node it is bound to (none yet: its ask alone), and from its claims. */
  ofPod(pod: PodFacts): GpuShare;
  /** The GPU devices the pod holds: those it asks for, and those of its claims. */
  devicesOf(pod: PodFacts): number;
  /** What an ask holds on a node, by name (null or unknown: its ask alone). */
  ofAsk(ask: GpuAsk, nodeName: string | null | undefined): GpuShare;
}

export interface GpuCounting {
  basis: GpuHoursBasis;
  settings: ShareSettings;
}

/** What a pod's DRA claims hold (caches/dra-cache.ts). */
export interface ClaimShares {
  shareOf(pod: PodFacts): GpuShare;
}

export function podShares(
  nodes: { get(name: string | null | undefined): Node | undefined },
  counting: GpuCounting,
  claims?: ClaimShares,
): PodShares {
  const ofAsk = (ask: GpuAsk, nodeName: string | null | undefined): GpuShare =>
    podGpuShare(ask, nodes.get(nodeName)?.metadata?.labels, counting.settings);
  const ofClaims = (pod: PodFacts): GpuShare => (claims === undefined ? NO_SHARE : claims.shareOf(pod));
  return {
    basis: counting.basis,
    ofAsk,
    ofPod: (pod) => {
      const asked = ofAsk(pod.ask, pod.nodeName);
      return addShares(asked, ofClaims(pod));
    },
    devicesOf: (pod) => pod.gpus + ofClaims(pod).devices,
  };
}
