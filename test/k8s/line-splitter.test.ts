import { expect } from 'chai';
import { LineSplitter } from '../../src/k8s/line-splitter.js';

const feed = (chunks: (string | Buffer)[]): string[] => {
  const splitter = new LineSplitter();
  const lines = chunks.flatMap((chunk) => splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  return [...lines, ...splitter.end()];
};

describe('k8s/line splitter', () => {
  it('gives each line once whatever the chunks, a line split over three chunks included', () => {
    expect(feed(['{"a":1}\n{"b"', ':', '2}\n{"c":3}\n'])).to.deep.equal(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('keeps a multi-byte character whose bytes arrive in two chunks', () => {
    const bytes = Buffer.from('{"team":"équipe-日本"}\n');
    const cut = bytes.indexOf(Buffer.from('日')) + 1;
    expect(feed([bytes.subarray(0, cut), bytes.subarray(cut)])).to.deep.equal(['{"team":"équipe-日本"}']);
  });

  it('drops CR of CRLF endings and empty lines, and gives a last line with no newline at the end', () => {
    expect(feed(['one\r\n\r\n', '\ntwo\r', '\nthree'])).to.deep.equal(['one', 'two', 'three']);
  });

  it('holds only the bytes of the line not yet complete', () => {
    const splitter = new LineSplitter();
    splitter.push(Buffer.from('done\npartial'));
    expect(splitter.pendingBytes).to.equal('partial'.length);
    expect(splitter.push(Buffer.from(' line\n'))).to.deep.equal(['partial line']);
    expect(splitter.pendingBytes).to.equal(0);
  });
});
