// A MIG instance's share of its GPU: compute slices from the profile's name, over the product's total.
import { expect } from 'chai';
import { migComputeSlices, migTotalSlices } from '../../../src/k8s/gpus/mig-profile.js';

describe('gpus: MIG profiles', () => {
  const profiles: [string, number | null][] = [
    ['1g.10gb', 1],
    ['1g.5gb', 1],
    ['2g.20gb', 2],
    ['3g.40gb', 3],
    ['4g.40gb', 4],
    ['7g.80gb', 7],
    ['1g.10gb+me', 1],
    ['1g.20gb-me', 1],
    ['1c.3g.20gb', 1],
    ['2c.3g.20gb', 2],
    ['0g.5gb', null],
    ['gpu', null],
    ['3g', null],
    ['', null],
  ];
  for (const [profile, slices] of profiles) {
    it(`${JSON.stringify(profile)} has ${slices ?? 'no'} compute slices`, () => {
      expect(migComputeSlices(profile)).to.equal(slices);
    });
  }

  const products: [string | null, number | null][] = [
    ['NVIDIA-H100-80GB-HBM3', 7],
    ['NVIDIA-A100-SXM4-40GB', 7],
    ['NVIDIA-A100-80GB-PCIe', 7],
    ['NVIDIA-H200', 7],
    ['NVIDIA-GH200-480GB', 7],
    ['NVIDIA-B200', 7],
    ['NVIDIA-H20', 7],
    ['NVIDIA-A30', 4],
    ['NVIDIA-A30-MIG-1g.6gb', 4],
    ['NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition', 4],
    ['NVIDIA H100 80GB HBM3', 7],
    ['NVIDIA-A10G', null],
    ['NVIDIA-H1000', null],
    [null, null],
  ];
  for (const [product, total] of products) {
    it(`${JSON.stringify(product)} has ${total ?? 'no known'} MIG slices`, () => {
      expect(migTotalSlices(product)).to.equal(total);
    });
  }

  it('the operator’s total wins over the known one, exactly or by the longest prefix', () => {
    const configured = { 'NVIDIA-H100*': 8, 'NVIDIA-H100-80GB*': 9, 'NVIDIA-X1': 3 };
    expect(migTotalSlices('NVIDIA-H100-80GB-HBM3', configured)).to.equal(9);
    expect(migTotalSlices('NVIDIA-H100-NVL', configured)).to.equal(8);
    expect(migTotalSlices('NVIDIA-X1', configured)).to.equal(3);
    expect(migTotalSlices('NVIDIA-X10', configured)).to.equal(null);
    expect(migTotalSlices('NVIDIA-A30', configured)).to.equal(4);
  });
});
