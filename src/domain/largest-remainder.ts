// Rounding a column of amounts so that it still adds up (the largest remainder method, Hamilton's):
// each amount is rounded down to `digits` decimals, and the units still missing from the total go,
// one each, to the amounts that lost the most. Rounding each amount to the nearest instead can miss
// the total: three teams' thirds of 10.00 are 3.33 each, 9.99 against the 10.00 billed.

/** Scaled amounts are first rounded to this many parts of a unit: 0.29 × 100 is 28.999999999999996, not 28 and a remainder. */
const PARTS = 1e6;

const units = (value: number, scale: number) => Math.round(value * scale * PARTS) / PARTS;

/**
 * `values` rounded to `digits` decimals, each its exact value rounded down or up, adding up to `total`
 * (default: their sum rounded to `digits`). Ties go to the earlier value, so callers order the rows first.
 */
export function largestRemainder(values: readonly number[], digits: number, total?: number): number[] {
  const scale = 10 ** digits;
  const scaled = values.map((value) => units(value, scale));
  const rounded = scaled.map((value) => Math.floor(value));
  const target = Math.round(total === undefined ? scaled.reduce((sum, value) => sum + value, 0) : units(total, scale));
  const byRemainder = scaled.map((value, i) => ({ i, remainder: value - (rounded[i] as number) }))
    .sort((a, b) => b.remainder - a.remainder || a.i - b.i)
    .map(({ i }) => i);
  let missing = target - rounded.reduce((sum, unit) => sum + unit, 0);
  // A total of the caller's may need more units than there are values, or fewer than the floors: the
  // extra go round again, largest remainders first; the ones too many come off the smallest first.
  for (let n = 0; missing !== 0 && byRemainder.length > 0; n++) {
    const step = missing > 0 ? 1 : -1;
    const at = step > 0 ? n : byRemainder.length - 1 - n;
    const i = byRemainder[((at % byRemainder.length) + byRemainder.length) % byRemainder.length] as number;
    rounded[i] = (rounded[i] as number) + step;
    missing -= step;
  }
  return rounded.map((unit) => unit / scale);
}
