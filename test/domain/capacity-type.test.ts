// A node's capacity type from its labels: each well-known label and its values, their order, and a
// configured label read alone with its value normalized.
import { expect } from 'chai';
import { capacityTypeFromLabels, capacityTypeLabelKeys, isCapacityType, type CapacityType } from '../../src/domain/capacity-type.js';

const WELL_KNOWN = '';

describe('domain/capacity type', () => {
  describe('the well-known labels (no label configured)', () => {
    const rows: { labels: Record<string, string>; expected: CapacityType | null }[] = [
      { labels: { 'karpenter.sh/capacity-type': 'on-demand' }, expected: 'on-demand' },
      { labels: { 'karpenter.sh/capacity-type': 'spot' }, expected: 'spot' },
      { labels: { 'karpenter.sh/capacity-type': 'reserved' }, expected: 'reserved' },
      { labels: { 'eks.amazonaws.com/capacityType': 'ON_DEMAND' }, expected: 'on-demand' },
      { labels: { 'eks.amazonaws.com/capacityType': 'SPOT' }, expected: 'spot' },
      { labels: { 'eks.amazonaws.com/capacityType': 'CAPACITY_BLOCK' }, expected: 'reserved' },
      { labels: { 'cloud.google.com/gke-spot': 'true' }, expected: 'spot' },
      { labels: { 'cloud.google.com/gke-preemptible': 'true' }, expected: 'spot' },
      { labels: { 'kubernetes.azure.com/scalesetpriority': 'spot' }, expected: 'spot' },
      { labels: { 'kubernetes.azure.com/scalesetpriority': 'regular' }, expected: 'on-demand' },
    ];
    for (const { labels, expected } of rows) {
      const [[key, value]] = Object.entries(labels) as [[string, string]];
      it(`reads ${key}=${value} as ${expected}`, () => {
        expect(capacityTypeFromLabels(labels, WELL_KNOWN)).to.equal(expected);
      });
    }

    it('takes the first label that says, in the documented order', () => {
      const all = {
        'karpenter.sh/capacity-type': 'reserved', 'eks.amazonaws.com/capacityType': 'SPOT', 'cloud.google.com/gke-spot': 'true',
        'kubernetes.azure.com/scalesetpriority': 'regular',
      };
      expect(capacityTypeFromLabels(all, WELL_KNOWN)).to.equal('reserved');
      const { 'karpenter.sh/capacity-type': _karpenter, ...withoutKarpenter } = all;
      expect(capacityTypeFromLabels(withoutKarpenter, WELL_KNOWN)).to.equal('spot');
      expect(capacityTypeFromLabels({ 'cloud.google.com/gke-spot': 'true', 'kubernetes.azure.com/scalesetpriority': 'regular' }, WELL_KNOWN)).to.equal('spot');
    });

    it('passes over a label whose value it does not know, as if absent', () => {
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': 'bargain', 'eks.amazonaws.com/capacityType': 'ON_DEMAND' }, WELL_KNOWN)).to.equal('on-demand');
      expect(capacityTypeFromLabels({ 'cloud.google.com/gke-spot': 'false' }, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels({ 'kubernetes.azure.com/scalesetpriority': 'low' }, WELL_KNOWN)).to.equal(null);
    });

    it('reads each value as its label\'s owner writes it, not another provider\'s spelling', () => {
      expect(capacityTypeFromLabels({ 'eks.amazonaws.com/capacityType': 'spot' }, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': 'SPOT' }, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels({ 'cloud.google.com/gke-spot': 'True' }, WELL_KNOWN)).to.equal(null);
    });

    it('is unknown (null) without a label, with an empty one, for an unknown node, or for a value named like a prototype member', () => {
      expect(capacityTypeFromLabels({}, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels(undefined, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': ' ' }, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': 'constructor' }, WELL_KNOWN)).to.equal(null);
      expect(capacityTypeFromLabels({ 'node.kubernetes.io/instance-type': 'p5.48xlarge' }, WELL_KNOWN)).to.equal(null);
    });
  });

  describe('a configured label', () => {
    const KEY = 'example.com/capacity';
    const rows: [value: string, expected: CapacityType | null][] = [
      ['on-demand', 'on-demand'], ['ondemand', 'on-demand'], ['on_demand', 'on-demand'], ['ON_DEMAND', 'on-demand'],
      ['On-Demand', 'on-demand'], ['regular', 'on-demand'], ['Standard', 'on-demand'],
      ['spot', 'spot'], ['SPOT', 'spot'], ['preemptible', 'spot'], ['Preemptible', 'spot'],
      ['reserved', 'reserved'], ['capacity-block', 'reserved'], ['CAPACITY_BLOCK', 'reserved'], [' spot ', 'spot'],
      ['true', null], ['savings-plan', null], ['', null], ['constructor', null],
    ];
    for (const [value, expected] of rows) {
      it(`reads "${value}" as ${expected}`, () => {
        expect(capacityTypeFromLabels({ [KEY]: value }, KEY)).to.equal(expected);
      });
    }

    it('is the only label read: the well-known ones no longer count', () => {
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': 'spot' }, KEY)).to.equal(null);
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': 'spot', [KEY]: 'reserved' }, KEY)).to.equal('reserved');
    });

    it('may be a well-known key, its values then normalized too', () => {
      expect(capacityTypeFromLabels({ 'karpenter.sh/capacity-type': 'SPOT' }, 'karpenter.sh/capacity-type')).to.equal('spot');
    });
  });

  it('names the labels it reads, for the caches that keep a node\'s labels', () => {
    expect(capacityTypeLabelKeys(WELL_KNOWN)).to.deep.equal([
      'karpenter.sh/capacity-type', 'eks.amazonaws.com/capacityType', 'cloud.google.com/gke-spot', 'cloud.google.com/gke-preemptible',
      'kubernetes.azure.com/scalesetpriority',
    ]);
    expect(capacityTypeLabelKeys('example.com/capacity')).to.deep.equal(['example.com/capacity']);
  });

  it('tells a capacity type from any other value', () => {
    expect(['on-demand', 'spot', 'reserved'].every(isCapacityType)).to.equal(true);
    expect([null, undefined, '', 'Spot', 'ondemand', 1].some(isCapacityType)).to.equal(false);
  });
});
