import { expect } from 'chai';
import { RingSlabs, type RingSlot } from '../../../src/telemetry/rings/ring-slabs.js';

const SLOT_BYTES = 64;

const bytesOf = (slot: RingSlot) => new Uint8Array(slot.buffer, slot.byteOffset, SLOT_BYTES);

describe('telemetry/ring slabs', () => {
  it('takes the slots of a reservation from one allocation, each its own zeroed range', () => {
    const slabs = new RingSlabs(SLOT_BYTES);
    slabs.reserve(100);
    const slots = Array.from({ length: 100 }, () => slabs.take());
    expect(new Set(slots.map((s) => s.buffer)).size).to.equal(1);
    expect(new Set(slots.map((s) => s.byteOffset)).size).to.equal(100);
    for (const slot of slots) {
      expect(slot.byteOffset % 8).to.equal(0);
      expect(slot.byteOffset + SLOT_BYTES).to.be.at.most(slot.buffer.byteLength);
      expect(bytesOf(slot).every((b) => b === 0)).to.equal(true);
    }
    expect(slabs.stats()).to.deep.equal({ reservedBytes: 100 * SLOT_BYTES, usedBytes: 100 * SLOT_BYTES, slabs: 1, allocations: 1 });
  });

  it('allocates nothing for a reservation it already has room for, and only the shortfall beyond it', () => {
    const slabs = new RingSlabs(SLOT_BYTES);
    slabs.reserve(50);
    slabs.reserve(40);
    expect(slabs.stats().allocations).to.equal(1);
    slabs.reserve(80);
    expect(slabs.stats()).to.include({ allocations: 2, reservedBytes: 80 * SLOT_BYTES, usedBytes: 0 });
  });

  it('grows by itself past what was reserved', () => {
    const slabs = new RingSlabs(SLOT_BYTES);
    slabs.reserve(2);
    const slots = Array.from({ length: 3 }, () => slabs.take());
    expect(new Set(slots.map((s) => s.buffer)).size).to.equal(2);
    expect(slabs.stats()).to.include({ allocations: 2, usedBytes: 3 * SLOT_BYTES });
  });

  it('zero-fills a slot given back before it is taken again', () => {
    const slabs = new RingSlabs(SLOT_BYTES);
    slabs.reserve(2);
    const kept = slabs.take();
    const written = slabs.take();
    bytesOf(kept).fill(7);
    bytesOf(written).fill(9);
    slabs.give(written);
    const again = slabs.take();
    expect(again.byteOffset).to.equal(written.byteOffset);
    expect(bytesOf(again).every((b) => b === 0)).to.equal(true);
    expect(bytesOf(kept).every((b) => b === 7)).to.equal(true);
  });

  it('releases a slab once every slot of it is given back', () => {
    const slabs = new RingSlabs(SLOT_BYTES);
    slabs.reserve(2);
    const first = slabs.take();
    slabs.reserve(3);
    const second = slabs.take();
    const third = slabs.take();
    expect(third.buffer).to.not.equal(first.buffer);
    slabs.give(third);
    expect(slabs.stats()).to.include({ slabs: 1, reservedBytes: 2 * SLOT_BYTES, usedBytes: 2 * SLOT_BYTES });
    slabs.give(first);
    slabs.give(second);
    expect(slabs.stats()).to.include({ slabs: 0, reservedBytes: 0, usedBytes: 0 });
  });

  it('refuses a slot it did not give out, and a slot size that breaks alignment', () => {
    const slabs = new RingSlabs(SLOT_BYTES);
    expect(() => slabs.give({ buffer: new ArrayBuffer(SLOT_BYTES), byteOffset: 0 })).to.throw('not taken from');
    expect(() => new RingSlabs(60)).to.throw('multiple of 8');
  });
});
