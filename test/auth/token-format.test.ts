import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { generateApiToken, hashApiToken, hasApiTokenPrefix, isApiTokenShape } from '../../src/auth/token-format.js';

describe('API token format', () => {
  it('generates gca_ plus 43 base64url characters, different each time', () => {
    const tokens = new Set(Array.from({ length: 50 }, () => generateApiToken()));
    expect(tokens.size).to.equal(50);
    for (const token of tokens) {
      expect(token).to.match(/^gca_[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token.slice(4), 'base64url')).to.have.length(32);
      expect(isApiTokenShape(token)).to.equal(true);
    }
  });

  it('hashes the whole token, prefix included, as lowercase hex SHA-256', () => {
    const token = `gca_${'A'.repeat(43)}`;
    expect(hashApiToken(token)).to.equal(createHash('sha256').update(token).digest('hex'));
    expect(hashApiToken(token)).to.match(/^[0-9a-f]{64}$/);
    expect(hashApiToken(token)).not.to.equal(hashApiToken('A'.repeat(43)));
  });

  it('rejects other shapes', () => {
    expect(isApiTokenShape(`gca_${'A'.repeat(42)}`)).to.equal(false);
    expect(isApiTokenShape(`gca_${'A'.repeat(44)}`)).to.equal(false);
    expect(isApiTokenShape(`gca_${'A'.repeat(42)}=`)).to.equal(false);
    expect(isApiTokenShape(`gca_${'A'.repeat(42)}+`)).to.equal(false);
    expect(isApiTokenShape(`GCA_${'A'.repeat(43)}`)).to.equal(false);
    expect(isApiTokenShape(`gca_${'A'.repeat(43)}\n`)).to.equal(false);
  });

  it('tells the prefix apart from the full shape', () => {
    expect(hasApiTokenPrefix('gca_x')).to.equal(true);
    expect(hasApiTokenPrefix('eyJhbGciOi.x.y')).to.equal(false);
  });
});
