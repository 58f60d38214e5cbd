// The SQL builders shared with SQLite name their parameters (`@org`, `@afterAt`) and pass an object of
// values; pg takes positional `$1..$n` and an array. This turns one into the other: each distinct
// name gets one number, in order of first appearance, so a name used twice binds one value.
//
// Only `@` outside string literals, quoted identifiers, dollar-quoted bodies and comments, and followed
// by a name's first character, starts a parameter: PostgreSQL's own operators that contain `@`
// (`@>`, `<@`, `@@`, `@-@`) are left alone, and so is the prefix operator `@` (absolute value) when a
// space follows it.

export interface PositionalQuery {
  text: string;
  values: unknown[];
}

interface Rewrite {
  text: string;
  /** Parameter names by position: names[0] is $1. */
  names: readonly string[];
}

// Keyed by SQL text. The builders produce a closed set of texts (their filter shapes, a few hundred),
// so the bound is only a guard against a caller that inlines values into the text.
const CACHE_LIMIT = 2_000;
const cache = new Map<string, Rewrite>();

/** `sql` with `@name` parameters as pg's text and values, taken from `params` by name. */
export function toPositional(sql: string, params: Readonly<Record<string, unknown>>): PositionalQuery {
  let rewrite = cache.get(sql);
  if (rewrite === undefined) {
    rewrite = rewriteNamed(sql);
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
    cache.set(sql, rewrite);
  }
  const values = rewrite.names.map((name) => {
    const value = Object.hasOwn(params, name) ? params[name] : undefined;
    // pg would send undefined as NULL: a forgotten parameter would silently match nothing.
    if (value === undefined) throw new Error(`Cannot bind SQL parameter @${name}: the values have no "${name}"`);
    return value;
  });
  return { text: rewrite.text, values };
}

const NAME_START = /[A-Za-z_]/;
const NAME_PART = /[A-Za-z0-9_]/;
const IDENTIFIER_PART = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/y;

/** The positional text of `sql` and its parameter names; exported for tests. */
export function rewriteNamed(sql: string): Rewrite {
  const names: string[] = [];
  const numbers = new Map<string, number>();
  let text = '';
  let i = 0;
  // Copies sql[i, end) unchanged and moves past it.
  const copyTo = (end: number) => {
    text += sql.slice(i, end);
    i = end;
  };
  while (i < sql.length) {
    const c = sql.charAt(i);
    const next = sql.charAt(i + 1);
    if (c === "'") {
      // E'…' strings take backslash escapes (E'it\'s'); standard strings only the doubled quote.
      const escapes = /[eE]/.test(sql.charAt(i - 1)) && !IDENTIFIER_PART.test(sql.charAt(i - 2));
      copyTo(endOfQuoted(sql, i, "'", escapes));
    } else if (c === '"') {
      copyTo(endOfQuoted(sql, i, '"', false));
    } else if (c === '-' && next === '-') {
      const end = sql.indexOf('\n', i);
      copyTo(end === -1 ? sql.length : end);
    } else if (c === '/' && next === '*') {
      copyTo(endOfBlockComment(sql, i));
    } else if (c === '$' && !IDENTIFIER_PART.test(sql.charAt(i - 1)) && matchDollarTag(sql, i) !== undefined) {
      const tag = matchDollarTag(sql, i) ?? '';
      const close = sql.indexOf(tag, i + tag.length);
      copyTo(close === -1 ? sql.length : close + tag.length);
    } else if (c === '$' && /[0-9]/.test(next) && !IDENTIFIER_PART.test(sql.charAt(i - 1))) {
      // $1 would collide with the numbers given to the names.
      throw new Error(`Cannot rewrite SQL with positional parameter ${sql.slice(i, i + 2)}…: name every parameter (@name)`);
    } else if (c === '@' && NAME_START.test(next)) {
      let end = i + 1;
      while (end < sql.length && NAME_PART.test(sql.charAt(end))) end++;
      const name = sql.slice(i + 1, end);
      let n = numbers.get(name);
      if (n === undefined) {
        names.push(name);
        n = names.length;
        numbers.set(name, n);
      }
      text += `$${n}`;
      i = end;
    } else {
      copyTo(i + 1);
    }
  }
  return { text, names };
}

/** The index after the closing quote of the literal or identifier opening at `start` (or the end). */
function endOfQuoted(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let j = start + 1;
  while (j < sql.length) {
    const c = sql.charAt(j);
    if (backslashEscapes && c === '\\') {
      j += 2;
    } else if (c === quote) {
      if (sql.charAt(j + 1) !== quote) return j + 1;
      j += 2; // a doubled quote stands for one
    } else {
      j++;
    }
  }
  return sql.length;
}

/** The index after the block comment opening at `start`; PostgreSQL's block comments nest. */
function endOfBlockComment(sql: string, start: number): number {
  let depth = 0;
  let j = start;
  while (j < sql.length) {
    if (sql.startsWith('/*', j)) {
      depth++;
      j += 2;
    } else if (sql.startsWith('*/', j)) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else {
      j++;
    }
  }
  return sql.length;
}

function matchDollarTag(sql: string, start: number): string | undefined {
  DOLLAR_TAG.lastIndex = start;
  return DOLLAR_TAG.exec(sql)?.[0];
}
