// The name the console saves a CSV download under: the one the service gives in Content-Disposition,
// as Koa writes it (`attachment; filename="…"`), or in RFC 6266's extended form for other characters.
import { expect } from 'chai';
import { filenameOf } from '../../console/src/content-disposition.js';

describe('web console: the file name of a download', () => {
  it('reads the quoted filename the service writes', () => {
    expect(filenameOf('attachment; filename="chargeback-acme-2026-11.csv"')).to.equal('chargeback-acme-2026-11.csv');
    expect(filenameOf('attachment; filename="say \\"hi\\".csv"')).to.equal('say "hi".csv');
    expect(filenameOf('attachment; filename=plain.csv')).to.equal('plain.csv');
  });

  it('prefers the extended filename*, and falls back to the plain one when it is malformed', () => {
    expect(filenameOf('attachment; filename="caf_.csv"; filename*=UTF-8\'\'caf%C3%A9.csv')).to.equal('café.csv');
    expect(filenameOf('attachment; filename="fallback.csv"; filename*=UTF-8\'\'bad%E0.csv')).to.equal('fallback.csv');
  });

  it('has no name without the header, or without a filename in it', () => {
    expect(filenameOf(null)).to.equal(undefined);
    expect(filenameOf('attachment')).to.equal(undefined);
  });
});
