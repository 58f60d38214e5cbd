// The typed arrays of one GPU's rings, carved out of one ArrayBuffer in the order asked, each aligned
// to its element size: one allocation per GPU, outside the V8 heap.

export type ArraySize = readonly [length: number, elementBytes: number];

function align(offset: number, width: number): number {
  return Math.ceil(offset / width) * width;
}

export class Carver {
  #offset = 0;
  readonly #buffer: ArrayBuffer;

  constructor(buffer: ArrayBuffer) {
    this.#buffer = buffer;
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
