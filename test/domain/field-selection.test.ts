// The selection the watch decoder applies to each object: what it keeps and what it drops.
import { expect } from 'chai';
import { selectFields, type FieldSelection } from '../../src/domain/field-selection.js';

describe('domain/field selection', () => {
  it('keeps the selected properties, whole where the selection says true, and drops every other', () => {
    const object = { metadata: { name: 'a', labels: { x: '1', y: '2' }, managedFields: [{ manager: 'kubectl' }] }, spec: { nodeName: 'n', volumes: [{ name: 'v' }] } };
    expect(selectFields(object, { metadata: { name: true, labels: true }, spec: { nodeName: true } })).to.deep.equal({ metadata: { name: 'a', labels: { x: '1', y: '2' } }, spec: { nodeName: 'n' } });
  });

  it('applies an object selection to each element of an array, and leaves out what is missing rather than adding undefined', () => {
    const selected = selectFields({ containers: [{ name: 'a', image: 'i', resources: { limits: { gpu: '1' } } }, { name: 'b', image: 'j' }] }, { containers: { name: true, resources: true } });
    expect(selected).to.deep.equal({ containers: [{ name: 'a', resources: { limits: { gpu: '1' } } }, { name: 'b' }] });
    expect(Object.keys((selected as { containers: object[] }).containers[1] ?? {})).to.deep.equal(['name']);
  });

  it('keeps a value of another shape than the selection expects as it is (null, a string, a number)', () => {
    expect(selectFields({ status: null, spec: 'odd', count: 3 }, { status: { phase: true }, spec: { nodeName: true }, count: { value: true } })).to.deep.equal({ status: null, spec: 'odd', count: 3 });
  });

  it('reads only own properties: a key named like an Object prototype member is not taken from the prototype', () => {
    const selection = JSON.parse('{"toString": true, "constructor": true, "__proto__": true}') as FieldSelection;
    expect(selectFields({}, selection)).to.deep.equal({});
    const hostile = JSON.parse('{"__proto__": {"polluted": 1}, "name": "a"}') as object;
    const selected = selectFields(hostile, { name: true }) as Record<string, unknown>;
    expect(selected).to.deep.equal({ name: 'a' });
    expect(selected['polluted']).to.equal(undefined);
  });
});
