// Which XID errors are new. dcgm-exporter's DCGM_FI_DEV_XID_ERRORS is the code of the GPU's last XID
// error (0: none since the driver loaded), not a count: a GPU keeps reporting an old error on every
// scrape. A new error shows as a change to another non-zero code; a repeat of the same code between
// two scrapes cannot be told apart and counts once. The first value this process sees of a GPU is
// only its baseline: when that error happened is unknown.

interface Observed {
  xid: number;
  /** Time (ms) of the sample it came from. */
  at: number;
}

export class XidWatch {
  readonly #last = new Map<string, Observed>();

  /** Takes one sample's XID value (NaN: none reported) at `at` (ms); true when it is a new error. */
  observe(gpuKey: string, xid: number, at: number): boolean {
    if (Number.isNaN(xid)) return false;
    const last = this.#last.get(gpuKey);
    if (last === undefined) {
      // The key may be a slice of the scrape's text, which it would keep alive.
      this.#last.set(Buffer.from(gpuKey, 'utf8').toString('utf8'), { xid, at });
      return false;
    }
    // An older sample arriving late says nothing about what changed since the newer one.
    if (at < last.at) return false;
    const changed = xid !== last.xid;
    last.xid = xid;
    last.at = at;
    return changed && xid !== 0;
  }

  /** Forgets the GPUs with no XID value since `before` (ms): their next value is a baseline again. */
  forgetBefore(before: number): number {
    let forgotten = 0;
    for (const [gpuKey, last] of this.#last) {
      if (last.at >= before) continue;
      this.#last.delete(gpuKey);
      forgotten += 1;
    }
    return forgotten;
  }

  get size(): number {
    return this.#last.size;
  }
}
