// The most anonymous memory the service held over a run. VmHWM is the kernel's peak of the whole RSS,
// file-backed pages included: with the index memory-mapped (SQLite's mmap_size), a 1M-row file adds
// its pages there, which the kernel can drop and read again under pressure. The anonymous part (heap,
// rings, buffers) cannot be dropped, and the kernel keeps no peak of it, so it is sampled here.
import type { ProcessMemory } from './service-process.js';

export class AnonymousPeak {
  #peakBytes = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly read: () => ProcessMemory | null, everyMs = 100) {
    this.#timer = setInterval(() => this.sample(), everyMs);
  }

  sample(): void {
    const memory = this.read();
    if (memory !== null) this.#peakBytes = Math.max(this.#peakBytes, memory.rssAnonBytes);
  }

  /** The peak so far, or null when /proc could not be read (off Linux). */
  get peakBytes(): number | null {
    return this.#peakBytes === 0 ? null : this.#peakBytes;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
