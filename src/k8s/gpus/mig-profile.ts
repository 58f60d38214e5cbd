// What share of a GPU one MIG instance is: its compute slices over the GPU's total. A profile is
// named `<G>g.<M>gb` (a GPU instance of G slices), or `<C>c.<G>g.<M>gb` (a compute instance of C of
// them, which shares its GPU instance's memory with the others), with optional suffixes such as
// `+me`. The total comes from the product: NVIDIA's MIG user guide gives 7 slices on A100, H100,
// H200, GH200 and B200, and 4 on A30 and the RTX PRO Blackwell boards. A product not in the table
// has no default: the operator names it in `mig_total_slices` (docs/workloads.md).
import { gfdProductName } from './product-name.js';

/** A MIG profile's compute slices, from its name; null when the name is no MIG profile. */
export function migComputeSlices(profile: string): number | null {
  const match = /^(?:(\d+)c\.)?(\d+)g\.\d+gb(?:[+-][a-z]+)*$/.exec(profile);
  if (match === null) return null;
  const slices = Number(match[1] ?? match[2]);
  return slices > 0 ? slices : null;
}

/** Products by the words of their GFD name (`NVIDIA-H100-80GB-HBM3`), with their MIG slices. */
const KNOWN_TOTALS: readonly (readonly [RegExp, number])[] = [
  [/(^|-)A30(-|$)/, 4],
  [/(^|-)RTX-PRO-\d+-BLACKWELL/i, 4],
  [/(^|-)(A100|A800|H100|H800|H200|H20|GH200|B200|GB200|B300|GB300)(-|$)/, 7],
];

/** Operator-given totals: a product name, or its prefix with a trailing `*`, and its slices. */
export type MigTotals = Readonly<Record<string, number>>;

function configuredTotal(product: string, configured: MigTotals): number | null {
  const exact = configured[product];
  if (exact !== undefined) return exact;
  let best: { prefix: string; total: number } | null = null;
  for (const [pattern, total] of Object.entries(configured)) {
    if (!pattern.endsWith('*')) continue;
    const prefix = pattern.slice(0, -1);
    if (product.startsWith(prefix) && (best === null || prefix.length > best.prefix.length)) best = { prefix, total };
  }
  return best?.total ?? null;
}

/** A GPU product's MIG compute slices: the operator's setting first, then the known products; null when unknown. */
export function migTotalSlices(name: string | null, configured: MigTotals = {}): number | null {
  const product = gfdProductName(name);
  if (product === null) return null;
  const fromConfig = configuredTotal(product, configured);
  if (fromConfig !== null) return fromConfig;
  return KNOWN_TOTALS.find(([pattern]) => pattern.test(product))?.[1] ?? null;
}
