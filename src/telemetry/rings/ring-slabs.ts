// Where the GPUs' rings live: a few large ArrayBuffers ("slabs") cut into equal slots, one GPU's rings
// per slot. One ArrayBuffer per GPU made the first tick over a fleet allocate 10,000 of them, and V8
// starts a full collection each time external memory grows past its limit: 7 mark-compacts and
// seconds of pause. reserve() makes the tick's allocation up front, in one slab.
//
// Rings rely on zeroed memory (a stamp of 0 is "never written"): a fresh slab is zeroed, and a slot
// given back is zero-filled before it is taken again. A slab whose every slot is free is let go.

export interface RingSlot {
  readonly buffer: ArrayBuffer;
  readonly byteOffset: number;
}

interface Slab {
  readonly buffer: ArrayBuffer;
  readonly slots: number;
  /** Byte offsets of the free slots, taken last-in first-out. */
  readonly free: number[];
}

interface TakenSlot extends RingSlot {
  readonly slab: Slab;
}

/** Growth when a slot is taken beyond what was reserved: a quarter of the capacity, within these bounds. */
const MIN_GROWTH_SLOTS = 16;
const MAX_GROWTH_SLOTS = 1024;

export class RingSlabs {
  readonly #slotBytes: number;
  readonly #slabs = new Set<Slab>();
  #capacity = 0;
  #used = 0;
  #allocations = 0;

  constructor(slotBytes: number) {
    if (!Number.isInteger(slotBytes) || slotBytes <= 0 || slotBytes % 8 !== 0) {
      throw new RangeError(`slot size must be a positive multiple of 8 bytes, got ${slotBytes}`);
    }
    this.#slotBytes = slotBytes;
  }

  /** Makes room for `slots` slots in use at once, in one allocation when more are needed. */
  reserve(slots: number): void {
    const missing = Math.ceil(slots) - this.#capacity;
    if (missing > 0) this.#allocate(missing);
  }

  take(): RingSlot {
    let slab = this.#withFreeSlot();
    if (slab === undefined) {
      slab = this.#allocate(Math.min(MAX_GROWTH_SLOTS, Math.max(MIN_GROWTH_SLOTS, Math.ceil(this.#capacity / 4))));
    }
    const byteOffset = slab.free.pop() as number;
    this.#used += 1;
    const slot: TakenSlot = { buffer: slab.buffer, byteOffset, slab };
    return slot;
  }

  /** Returns a slot taken from here; it must not be used afterwards. */
  give(slot: RingSlot): void {
    const { slab } = slot as TakenSlot;
    if (slab === undefined || !this.#slabs.has(slab) || slab.buffer !== slot.buffer) {
      throw new Error('a ring slot given back to slabs it was not taken from');
    }
    this.#used -= 1;
    if (slab.free.length + 1 === slab.slots) {
      this.#slabs.delete(slab);
      this.#capacity -= slab.slots;
      return;
    }
    new Uint8Array(slab.buffer, slot.byteOffset, this.#slotBytes).fill(0);
    slab.free.push(slot.byteOffset);
  }

  stats(): { reservedBytes: number; usedBytes: number; slabs: number; allocations: number } {
    return {
      reservedBytes: this.#capacity * this.#slotBytes,
      usedBytes: this.#used * this.#slotBytes,
      slabs: this.#slabs.size,
      allocations: this.#allocations,
    };
  }

  #withFreeSlot(): Slab | undefined {
    for (const slab of this.#slabs) if (slab.free.length > 0) return slab;
    return undefined;
  }

  #allocate(slots: number): Slab {
    const buffer = new ArrayBuffer(slots * this.#slotBytes);
    // Popped from the end: the first slots of a slab are taken first.
    const free = Array.from({ length: slots }, (_, i) => (slots - 1 - i) * this.#slotBytes);
    const slab: Slab = { buffer, slots, free };
    this.#slabs.add(slab);
    this.#capacity += slots;
    this.#allocations += 1;
    return slab;
  }
}
