// How the API reports an average (and `current`, a mean of GPUs): to 0.01 of the metric's unit.
export function roundAverage(value: number): number {
  return Math.round(value * 100) / 100;
}
