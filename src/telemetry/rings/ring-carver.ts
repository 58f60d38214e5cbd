// The typed arrays of one GPU's rings, carved in the order asked out of an ArrayBuffer from a given
// offset (the GPU's slot in a slab), each aligned to its element size: outside the V8 heap.

export type ArraySize = readonly [length: number, elementBytes: number];

function align(offset: number, width: number): number {
  return Math.ceil(offset / width) * width;
}

export class Carver {
  #offset: number;
  readonly #buffer: ArrayBuffer;

  /** `byteOffset` must be a multiple of 8, as every slot of a slab is (bytes() rounds up to 8). */
  constructor(buffer: ArrayBuffer, byteOffset = 0) {
    this.#buffer = buffer;
    this.#offset = byteOffset;
  }

  /** Bytes of a buffer holding arrays of these sizes, carved in this order. */
  static bytes(sizes: readonly ArraySize[]): number {
    let total = 0;
    for (const [length, width] of sizes) total = align(total, width) + length * width;
    return align(total, 8);
  }

  u32(length: number): Uint32Array {
    this.#offset = align(this.#offset, 4);
    const view = new Uint32Array(this.#buffer, this.#offset, length);
    this.#offset += length * 4;
    return view;
  }

  u16(length: number): Uint16Array {
    this.#offset = align(this.#offset, 2);
    const view = new Uint16Array(this.#buffer, this.#offset, length);
    this.#offset += length * 2;
    return view;
  }

  u8(length: number): Uint8Array {
    const view = new Uint8Array(this.#buffer, this.#offset, length);
    this.#offset += length;
    return view;
  }
}
