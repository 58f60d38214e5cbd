// How a node's provider sells its capacity: on-demand, spot or reserved, so that a GPU-hour can be
// priced at the rate of what it ran on (issue 40). Workloads take it from the node their pod runs on,
// the fleet from each node. It comes from the labels that autoscalers and managed node pools set, or
// from one label a deployment names (label_capacity_type); null when no label says.

export const CAPACITY_TYPES = ['on-demand', 'spot', 'reserved'] as const;
export type CapacityType = (typeof CAPACITY_TYPES)[number];

export function isCapacityType(value: unknown): value is CapacityType {
  return (CAPACITY_TYPES as readonly unknown[]).includes(value);
}

type Labels = Readonly<Record<string, string | undefined>> | undefined;

/** What one label's values mean: the value as the label's owner writes it, exactly. */
type ValueMeanings = Readonly<Record<string, CapacityType>>;

/** The labels read when none is configured, in this order: Karpenter's, then each managed node pool's. */
const WELL_KNOWN_LABELS: readonly { key: string; meanings: ValueMeanings }[] = [
  { key: 'karpenter.sh/capacity-type', meanings: { 'on-demand': 'on-demand', spot: 'spot', reserved: 'reserved' } },
  // CAPACITY_BLOCK: EC2 Capacity Blocks for ML, GPUs bought ahead for a fixed time.
  { key: 'eks.amazonaws.com/capacityType', meanings: { ON_DEMAND: 'on-demand', SPOT: 'spot', CAPACITY_BLOCK: 'reserved' } },
  // GKE marks only the spot and preemptible nodes; its other nodes carry neither label.
  { key: 'cloud.google.com/gke-spot', meanings: { true: 'spot' } },
  { key: 'cloud.google.com/gke-preemptible', meanings: { true: 'spot' } },
  { key: 'kubernetes.azure.com/scalesetpriority', meanings: { spot: 'spot', regular: 'on-demand' } },
];

/**
 * The values a configured label may hold, after normalizing (lower case, `_` as `-`): a deployment's
 * own label follows no one provider's spelling, so each provider's words are accepted.
 */
const CONFIGURED_MEANINGS: ValueMeanings = {
  'on-demand': 'on-demand', ondemand: 'on-demand', regular: 'on-demand', standard: 'on-demand',
  spot: 'spot', preemptible: 'spot',
  reserved: 'reserved', 'capacity-block': 'reserved',
};

/** A non-empty label value, else undefined (an empty label means "not set"). */
function labelValue(labels: Labels, key: string): string | undefined {
  const value = labels?.[key];
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** Own properties only: a value such as `constructor` must not find Object's prototype. */
function meaningOf(meanings: ValueMeanings, value: string): CapacityType | null {
  return Object.hasOwn(meanings, value) ? (meanings[value] ?? null) : null;
}

/** The label keys capacityTypeFromLabels reads for `key` (what a cache of node labels must keep). */
export function capacityTypeLabelKeys(key: string): readonly string[] {
  return key === '' ? WELL_KNOWN_LABELS.map((label) => label.key) : [key];
}

/**
 * The node's capacity type. `key` '' (the default): the well-known labels, the first whose value it
 * knows wins (a label with a value it does not know is passed over, as if absent). Else only the
 * label `key`, its value normalized. null: no label says (unknown).
 */
export function capacityTypeFromLabels(labels: Labels, key: string): CapacityType | null {
  if (key !== '') {
    const value = labelValue(labels, key);
    return value === undefined ? null : meaningOf(CONFIGURED_MEANINGS, value.trim().toLowerCase().replaceAll('_', '-'));
  }
  for (const label of WELL_KNOWN_LABELS) {
    const value = labelValue(labels, label.key);
    const meaning = value === undefined ? null : meaningOf(label.meanings, value.trim());
    if (meaning !== null) return meaning;
  }
  return null;
}
