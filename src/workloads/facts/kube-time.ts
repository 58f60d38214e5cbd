// Kubernetes times as the caches keep them: seconds since 2020-01-01, a small integer. Kubernetes
// writes its times in whole seconds, and V8 keeps an integer field of an object inline, where a
// millisecond time (a double) takes a 16-byte box of its own: at 150k cached pods with five times
// each that is 12 MB. A time with a fraction of a second stays exact, only boxed.
const EPOCH_MS = Date.UTC(2020, 0, 1);

/** A time in epoch ms (or null) as kept: seconds since the caches' epoch. */
export function toKubeTime(ms: number | null): number | null {
  return ms === null ? null : (ms - EPOCH_MS) / 1000;
}

/** A kept time back in epoch ms. */
export function fromKubeTime(time: number | null): number | null {
  return time === null ? null : Math.round(time * 1000) + EPOCH_MS;
}
