// The SQL builders shared with SQLite name their parameters; pg binds positions
// (src/store/postgres/named-params.ts). Tables of SQL in, text and values out.
import { expect } from 'chai';
import { rewriteNamed, toPositional } from '../../../src/store/postgres/named-params.js';

describe('PostgreSQL named parameters', () => {
  const cases: { title: string; sql: string; text: string; names: string[] }[] = [
    { title: 'numbers parameters in order of first use', sql: 'w.org = @org AND w.at < @before', text: 'w.org = $1 AND w.at < $2', names: ['org', 'before'] },
    { title: 'binds a repeated name to one number', sql: '@now - w.a + @org || @now', text: '$1 - w.a + $2 || $1', names: ['now', 'org'] },
    { title: 'reads a name of letters, digits and underscores', sql: '(@afterAt, @after_id2)', text: '($1, $2)', names: ['afterAt', 'after_id2'] },
    { title: 'leaves @ inside a string literal', sql: "x = 'a@b.c' AND y = @y", text: "x = 'a@b.c' AND y = $1", names: ['y'] },
    { title: 'leaves @ inside a literal with a doubled quote', sql: "x = 'it''s @not' AND y = @y", text: "x = 'it''s @not' AND y = $1", names: ['y'] },
    { title: 'leaves @ inside an E string with a backslash-escaped quote', sql: "x = E'a\\' @no' AND @y", text: "x = E'a\\' @no' AND $1", names: ['y'] },
    { title: 'leaves @ inside a quoted identifier', sql: 'SELECT "col@x" FROM t WHERE a = @a', text: 'SELECT "col@x" FROM t WHERE a = $1', names: ['a'] },
    { title: 'leaves @ inside a line comment', sql: '-- uses @skip\nSELECT @a', text: '-- uses @skip\nSELECT $1', names: ['a'] },
    { title: 'leaves @ inside a nested block comment', sql: '/* a /* @x */ @y */ @z', text: '/* a /* @x */ @y */ $1', names: ['z'] },
    { title: 'leaves @ inside a dollar-quoted body', sql: 'SELECT $fn$ @no $fn$, $$ @no $$, @yes', text: 'SELECT $fn$ @no $fn$, $$ @no $$, $1', names: ['yes'] },
    { title: 'leaves PostgreSQL operators that contain @', sql: 'a @> b AND c <@ d AND e @@ f AND @ g AND h = @h', text: 'a @> b AND c <@ d AND e @@ f AND @ g AND h = $1', names: ['h'] },
    { title: 'ends a name at a cast', sql: 'y = @y::bigint', text: 'y = $1::bigint', names: ['y'] },
    { title: 'leaves a $ inside an identifier', sql: 'SELECT a$1 FROM t WHERE b = @b', text: 'SELECT a$1 FROM t WHERE b = $1', names: ['b'] },
    { title: 'changes nothing in SQL without parameters', sql: "SELECT 1 -- '@\n", text: "SELECT 1 -- '@\n", names: [] },
  ];
  for (const { title, sql, text, names } of cases) {
    it(title, () => {
      expect(rewriteNamed(sql)).to.deep.equal({ text, names });
    });
  }

  it('refuses SQL that already has a positional parameter, which would collide with the numbers', () => {
    expect(() => rewriteNamed('x = $1 AND y = @y')).to.throw('Cannot rewrite SQL with positional parameter $1…: name every parameter (@name)');
  });

  it('takes the values by name, in the order of the numbers', () => {
    expect(toPositional('a = @a AND b = @b AND c = @a', { b: 2, a: 'x', unused: 3 })).to.deep.equal({ text: 'a = $1 AND b = $2 AND c = $1', values: ['x', 2] });
  });

  it('binds null when the value is null', () => {
    expect(toPositional('a IS NOT DISTINCT FROM @a', { a: null }).values).to.deep.equal([null]);
  });

  it('throws naming a parameter missing from the values, or undefined there', () => {
    expect(() => toPositional('a = @a AND b = @b', { a: 1 })).to.throw('Cannot bind SQL parameter @b: the values have no "b"');
    expect(() => toPositional('a = @a', { a: undefined })).to.throw('Cannot bind SQL parameter @a');
  });

  it('does not take a parameter from the prototype of the values', () => {
    expect(() => toPositional('a = @toString', {})).to.throw('Cannot bind SQL parameter @toString');
  });

  it('gives the same text for the same SQL with other values', () => {
    const sql = 'org = @org AND at >= @from';
    const first = toPositional(sql, { org: 'a', from: 1 });
    const second = toPositional(sql, { org: 'b', from: 2 });
    expect(second.text).to.equal(first.text);
    expect(second.values).to.deep.equal(['b', 2]);
  });
});
