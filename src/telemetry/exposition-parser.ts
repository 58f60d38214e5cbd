// Reads the Prometheus text exposition format 0.0.4 (what dcgm-exporter and nvidia_gpu_exporter serve)
// in one pass over char codes and hands each sample to a visitor instead of building objects: the
// sampler parses every GPU node's scrape every interval, so per-sample cost and garbage matter.
// It is as strict as Prometheus' own parser (expfmt's TextParser, Go) on what an exporter writes, so a
// payload Prometheus would reject fails here too, with the line and an excerpt, instead of turning
// into half a scrape.

/** Thrown for text the parser cannot read; `line` is 1-based. code is always 'EXPOSITION_INVALID'. */
export class ExpositionParseError extends Error {
  readonly code = 'EXPOSITION_INVALID';
  readonly line: number;
  constructor(message: string, line: number) {
    super(message);
    this.name = 'ExpositionParseError';
    this.line = line;
  }
}

/**
 * Called once per sample line. `labels` is flat [name0, value0, name1, value1, ...] in text order, with
 * escapes (\\, \", \n) already decoded; the array is reused between calls: copy what you keep.
 * `value` may be NaN, +Infinity or -Infinity.
 * Names and values are usually slices of `text`, and V8 keeps a whole string alive while a slice of it
 * is: a string kept long after the scrape (a map key, say) holds the payload in memory with it.
 */
export type SampleVisitor = (name: string, labels: readonly string[], value: number) => void;

/** Parses a whole exposition, calling `visit` for every sample; returns the number of samples. Throws ExpositionParseError. */
export function parseExposition(text: string, visit: SampleVisitor): number {
  return new ExpositionScanner(text, visit).run();
}

const TAB = 9;
const CR = 13;
const SPACE = 32;
const QUOTE = 34;
const HASH = 35;
const PLUS = 43;
const COMMA = 44;
const MINUS = 45;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const EQUALS = 61;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

const METRIC_START = 1;
const METRIC_CHAR = 2;
const LABEL_START = 4;
const LABEL_CHAR = 8;
const SPECIAL_START = 16;

/** ASCII char classes; every code ≥ 128 is in none (names are ASCII, label values are not scanned with it). */
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c += 1) {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const digit = c >= ZERO && c <= NINE;
  if (letter || c === 95 || c === 58) CLASS[c] |= METRIC_START | METRIC_CHAR;
  if (digit) CLASS[c] |= METRIC_CHAR | LABEL_CHAR;
  if (letter || c === 95) CLASS[c] |= LABEL_START | LABEL_CHAR;
}
// i/I (inf, infinity) and n/N (nan): the words Go's strconv.ParseFloat accepts besides numbers.
for (const c of [73, 105, 78, 110]) CLASS[c] |= SPECIAL_START;

/** 10^0 … 10^22: the powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
/** A mantissa of at most 15 digits is below 2^53, so it and the power of ten are exact (Clinger's fast path). */
const EXACT_DIGITS = 15;

const METRIC_TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Go lowercases the TYPE word; exporters write it lowercase already, so that is tried first. */
function isMetricType(word: string): boolean {
  return METRIC_TYPES.includes(word) || METRIC_TYPES.includes(word.toLowerCase());
}
const EXCERPT_RADIUS = 24;

/**
 * One parse: the text, the cursor and the current line's bounds. Scans stop at `end` without a bounds
 * check where they can: the code at `end` is CR, LF or NaN (past the text), which no token accepts.
 * Slices are compared with === rather than startsWith, which V8 runs char by char (several times slower).
 */
class ExpositionScanner {
  private readonly text: string;
  private readonly visit: SampleVisitor;
  private pos = 0;
  private end = 0;
  private lineStart = 0;
  private line = 0;
  /** Position of the next backslash at or after the label value being read; -1 when unknown. */
  private nextBackslash = -1;
  /** The labels handed to the visitor; between lines it still holds the previous line's strings. */
  private readonly labels: string[] = [];
  /** The previous sample's name, reused when the next one is the same (no new string, hash already cached). */
  private previousName = '';
  private readonly labelSets = new LabelSetCache();

  constructor(text: string, visit: SampleVisitor) {
    this.text = text;
    this.visit = visit;
  }

  run(): number {
    const text = this.text;
    const length = text.length;
    let samples = 0;
    let start = 0;
    while (start < length) {
      let newline = text.indexOf('\n', start);
      if (newline === -1) newline = length;
      let end = newline;
      if (end > start && text.charCodeAt(end - 1) === CR) end -= 1;
      this.line += 1;
      this.lineStart = start;
      this.end = end;
      this.pos = this.skipBlanks(start);
      if (this.pos < end) {
        if (text.charCodeAt(this.pos) === HASH) {
          this.comment();
        } else {
          this.sample();
          samples += 1;
        }
      }
      start = newline + 1;
    }
    return samples;
  }

  private skipBlanks(from: number): number {
    const text = this.text;
    let p = from;
    for (let c = text.charCodeAt(p); c === SPACE || c === TAB; c = text.charCodeAt(p)) p += 1;
    return p;
  }

  private sample(): void {
    const text = this.text;
    let p = this.metricName(this.pos, null);
    const name = this.previousName;
    let c = text.charCodeAt(p);
    if (p >= this.end) this.fail(p, `expected a value after metric name "${name}"`);
    if (c !== OPEN_BRACE) {
      if (c !== SPACE && c !== TAB) this.fail(p, `expected a space or "{" after metric name "${name}"`);
      p = this.skipBlanks(p);
      c = text.charCodeAt(p);
    }
    const labels = this.labels;
    if (c === OPEN_BRACE) {
      // Go's parser needs no blank between "}" and the value either.
      p = this.skipBlanks(this.labelSet(p + 1));
    } else if (labels.length !== 0) {
      labels.length = 0;
    }
    if (p >= this.end) this.fail(p, `expected a value after ${labels.length === 0 ? `metric name "${name}"` : 'the label set'}`);
    const value = this.value(p);
    p = this.skipBlanks(this.pos);
    if (p < this.end) {
      p = this.skipBlanks(this.timestamp(p));
      if (p < this.end) this.fail(p, 'expected the end of the line after the timestamp');
    }
    this.visit(name, labels, value);
  }

  /**
   * Reads the metric name at `start` into this.previousName and returns the position after it. The
   * previous name is tried first, as a family's HELP, TYPE and samples repeat it: comparing one slice
   * costs far less than reading char by char.
   */
  private metricName(start: number, comment: 'HELP' | 'TYPE' | null): number {
    const text = this.text;
    const previous = this.previousName;
    let p = start + previous.length;
    let c = text.charCodeAt(p);
    if (previous.length > 0 && !(c < 128 && (CLASS[c] & METRIC_CHAR) !== 0) && text.slice(start, p) === previous) return p;
    c = text.charCodeAt(start);
    if (!(c < 128 && (CLASS[c] & METRIC_START) !== 0)) this.fail(start, `expected a metric name${comment === null ? '' : ` after "# ${comment}"`}`);
    p = start + 1;
    for (c = text.charCodeAt(p); c < 128 && (CLASS[c] & METRIC_CHAR) !== 0; c = text.charCodeAt(p)) p += 1;
    this.previousName = text.slice(start, p);
    return p;
  }

  /** Reads `name="value",...}` from `from` (just after "{") into this.labels; returns the position after "}". */
  private labelSet(from: number): number {
    const labelSets = this.labelSets;
    if (!labelSets.worthTrying()) return this.readLabelSet(from);
    const known = labelSets.match(this.text, from, this.end, this.labels);
    if (known !== -1) return known;
    const after = this.readLabelSet(from);
    labelSets.remember(this.text.slice(from, after), this.labels);
    return after;
  }

  private readLabelSet(from: number): number {
    const text = this.text;
    const labels = this.labels;
    // While every name so far is the previous line's name at the same place, the names are known to be
    // distinct (the previous line was checked): the duplicate check runs only from the first difference.
    let sameNames = true;
    let n = 0;
    let p = from;
    for (;;) {
      let c = text.charCodeAt(p);
      if (c === SPACE || c === TAB) c = text.charCodeAt((p = this.skipBlanks(p)));
      if (c === CLOSE_BRACE) {
        p += 1;
        break;
      }
      const nameStart = p;
      let name = n < labels.length ? labels[n] : '';
      p += name.length;
      // The previous line's name at this place, followed by "=", needs no char-by-char read.
      if (name.length === 0 || text.charCodeAt(p) !== EQUALS || text.slice(nameStart, p) !== name) {
        if (!(c < 128 && (CLASS[c] & LABEL_START) !== 0)) this.fail(nameStart, 'expected a label name or "}"');
        p = nameStart + 1;
        for (c = text.charCodeAt(p); c < 128 && (CLASS[c] & LABEL_CHAR) !== 0; c = text.charCodeAt(p)) p += 1;
        name = text.slice(nameStart, p);
        sameNames = false;
      }
      if (!sameNames) {
        this.checkNewLabelName(name, n, nameStart);
        labels[n] = name;
      }
      c = text.charCodeAt(p);
      if (c === SPACE || c === TAB) c = text.charCodeAt((p = this.skipBlanks(p)));
      if (c !== EQUALS) this.fail(p, `expected "=" after label name "${name}"`);
      c = text.charCodeAt((p += 1));
      if (c === SPACE || c === TAB) c = text.charCodeAt((p = this.skipBlanks(p)));
      if (c !== QUOTE) this.fail(p, `expected a double-quoted value for label "${name}"`);
      p = this.labelValue(p + 1, n + 1, name);
      n += 2;
      c = text.charCodeAt(p);
      if (c === SPACE || c === TAB) c = text.charCodeAt((p = this.skipBlanks(p)));
      if (c === COMMA) {
        p += 1;
      } else if (c === CLOSE_BRACE) {
        p += 1;
        break;
      } else {
        this.fail(p, `expected "," or "}" after the value of label "${name}"`);
      }
    }
    if (labels.length !== n) labels.length = n;
    return p;
  }

  /** Rejects a label name already in this line's first `count` entries, and the reserved `__name__`. */
  private checkNewLabelName(name: string, count: number, at: number): void {
    if (name === '__name__') this.fail(at, 'label name "__name__" is reserved');
    const labels = this.labels;
    for (let j = 0; j < count; j += 2) {
      if (labels[j] === name) this.fail(at, `duplicate label name "${name}"`);
    }
  }

  /** Reads a label value from `from` (just after the opening quote) into labels[index]; returns the position after the closing quote. */
  private labelValue(from: number, index: number, labelName: string): number {
    const text = this.text;
    const end = this.end;
    let quote = text.indexOf('"', from);
    if (quote === -1 || quote > end) quote = end;
    if (this.nextBackslash < from) {
      this.nextBackslash = text.indexOf('\\', from);
      if (this.nextBackslash === -1) this.nextBackslash = text.length;
    }
    if (this.nextBackslash < quote) return this.escapedLabelValue(from, index, labelName);
    if (quote === end) this.fail(end, `unterminated value of label "${labelName}", expected a closing double quote`);
    this.labels[index] = text.slice(from, quote);
    return quote + 1;
  }

  /** The slow path for a value with a backslash: decodes \\, \" and \n, and rejects any other escape. */
  private escapedLabelValue(from: number, index: number, labelName: string): number {
    const text = this.text;
    const end = this.end;
    let decoded = '';
    let chunk = from;
    let p = from;
    for (;;) {
      if (p >= end) this.fail(end, `unterminated value of label "${labelName}", expected a closing double quote`);
      const c = text.charCodeAt(p);
      if (c === QUOTE) break;
      if (c !== BACKSLASH) {
        p += 1;
        continue;
      }
      decoded += text.slice(chunk, p);
      const escaped = p + 1 < end ? text.charCodeAt(p + 1) : -1;
      if (escaped === BACKSLASH) decoded += '\\';
      else if (escaped === QUOTE) decoded += '"';
      else if (escaped === 110) decoded += '\n';
      else this.fail(p, `invalid escape in the value of label "${labelName}" (only \\\\, \\" and \\n are allowed)`, JSON.stringify(text.slice(p, p + 2)));
      p += 2;
      chunk = p;
    }
    this.labels[index] = decoded + text.slice(chunk, p);
    this.nextBackslash = -1;
    return p + 1;
  }

  /**
   * Reads the sample value at `from` and leaves this.pos after it. Accepts what Go's strconv.ParseFloat
   * accepts in base 10, as Prometheus does: [+-]digits[.digits][(e|E)[+-]digits] with at least one
   * digit, `inf`/`infinity` with an optional sign and `nan`, case-insensitive. Hex, underscores and a
   * finite-looking number that overflows a double (Go's ErrRange) are errors.
   */
  private value(from: number): number {
    const text = this.text;
    let p = from;
    let c = text.charCodeAt(p);
    let negative = false;
    if (c === PLUS || c === MINUS) {
      negative = c === MINUS;
      p += 1;
      c = text.charCodeAt(p);
    }
    if (c < 128 && (CLASS[c] & SPECIAL_START) !== 0) return this.specialValue(from, p, negative);
    let mantissa = 0;
    let digits = 0;
    let fraction = 0;
    for (; c >= ZERO && c <= NINE; c = text.charCodeAt(p)) {
      mantissa = mantissa * 10 + (c - ZERO);
      digits += 1;
      p += 1;
    }
    if (c === DOT) {
      p += 1;
      for (c = text.charCodeAt(p); c >= ZERO && c <= NINE; c = text.charCodeAt(p)) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits += 1;
        fraction += 1;
        p += 1;
      }
    }
    if (digits === 0) this.failValue(from);
    let exponent = 0;
    if (c === 101 || c === 69) {
      p += 1;
      c = text.charCodeAt(p);
      let exponentNegative = false;
      if (c === PLUS || c === MINUS) {
        exponentNegative = c === MINUS;
        p += 1;
        c = text.charCodeAt(p);
      }
      if (!(c >= ZERO && c <= NINE)) this.failValue(from);
      for (; c >= ZERO && c <= NINE; c = text.charCodeAt(p)) {
        // Capped: past 10^±400 the double is 0 or Infinity anyway, and Number() gets the slow path.
        if (exponent < 100_000) exponent = exponent * 10 + (c - ZERO);
        p += 1;
      }
      if (exponentNegative) exponent = -exponent;
    }
    if (p < this.end && c !== SPACE && c !== TAB) this.failValue(from);
    this.pos = p;
    const scale = exponent - fraction;
    let value: number;
    if (digits <= EXACT_DIGITS && scale >= 0 && scale <= 22) {
      value = mantissa * POW10[scale];
    } else if (digits <= EXACT_DIGITS && scale < 0 && scale >= -22) {
      value = mantissa / POW10[-scale];
    } else {
      // The token is a plain decimal by now (sign included), which Number() reads with correct rounding.
      value = Number(text.slice(from, p));
      if (!Number.isFinite(value)) this.fail(from, 'sample value is out of range for a double', this.quoteToken(from));
      return value;
    }
    return negative ? -value : value;
  }

  /** `inf`, `infinity` (either with a sign) and `nan` (without one), case-insensitive, as Go reads them. */
  private specialValue(from: number, wordStart: number, negative: boolean): number {
    const text = this.text;
    let p = wordStart;
    for (let c = text.charCodeAt(p); p < this.end && c !== SPACE && c !== TAB; c = text.charCodeAt(p)) p += 1;
    const word = text.slice(wordStart, p).toLowerCase();
    this.pos = p;
    if (word === 'inf' || word === 'infinity') return negative ? -Infinity : Infinity;
    if (word === 'nan' && wordStart === from) return NaN;
    return this.failValue(from);
  }

  /** Reads an optional-sign integer timestamp in ms at `from` (ignored: samples are stamped by the scraper); returns the position after it. */
  private timestamp(from: number): number {
    const text = this.text;
    let p = from;
    let c = text.charCodeAt(p);
    const negative = c === MINUS;
    if (c === PLUS || c === MINUS) {
      p += 1;
      c = text.charCodeAt(p);
    }
    const digitsStart = p;
    for (; c >= ZERO && c <= NINE; c = text.charCodeAt(p)) p += 1;
    if (p === digitsStart || (p < this.end && c !== SPACE && c !== TAB)) {
      this.fail(from, 'expected an integer timestamp in milliseconds after the value', this.quoteToken(from));
    }
    // Go's strconv.ParseInt(…, 10, 64): more than an int64 is an error.
    let first = digitsStart;
    while (first < p - 1 && text.charCodeAt(first) === ZERO) first += 1;
    const significant = text.slice(first, p);
    const limit = negative ? '9223372036854775808' : '9223372036854775807';
    if (significant.length > limit.length || (significant.length === limit.length && significant > limit)) {
      this.fail(from, 'timestamp is out of range for a 64-bit integer', this.quoteToken(from));
    }
    return p;
  }

  /**
   * A line starting with "#". `# HELP name [text]` and `# TYPE name type` must name a valid metric
   * (and TYPE a known type, case-insensitive as in Go); any other comment is ignored. HELP text is
   * not read: nothing here uses it.
   */
  private comment(): void {
    const text = this.text;
    const end = this.end;
    let p = this.skipBlanks(this.pos + 1);
    const word = text.slice(p, p + 4);
    const keyword = word === 'HELP' ? 'HELP' : word === 'TYPE' ? 'TYPE' : null;
    p += 4;
    let c = text.charCodeAt(p);
    // Another comment, or a longer word such as "# HELPER".
    if (keyword === null || (p < end && c !== SPACE && c !== TAB)) return;
    p = this.metricName(this.skipBlanks(p), keyword);
    c = text.charCodeAt(p);
    if (p < end && c !== SPACE && c !== TAB) this.fail(p, `invalid character in the metric name after "# ${keyword}"`);
    if (keyword === 'HELP') return;
    const name = this.previousName;
    p = this.skipBlanks(p);
    const typeStart = p;
    for (c = text.charCodeAt(p); p < end && c !== SPACE && c !== TAB; c = text.charCodeAt(p)) p += 1;
    if (!isMetricType(text.slice(typeStart, p))) {
      const found = typeStart < end ? this.quoteToken(typeStart) : 'the end of the line';
      this.fail(typeStart, `expected a metric type (${METRIC_TYPES.join(', ')}) for "${name}"`, found);
    }
    p = this.skipBlanks(p);
    if (p < end) this.fail(p, `expected the end of the line after the type of "${name}"`);
  }

  private failValue(from: number): never {
    return this.fail(from, 'expected a number, "NaN" or "Inf" as sample value', this.quoteToken(from));
  }

  private describeChar(at: number): string {
    return at >= this.end ? 'the end of the line' : JSON.stringify(this.text.charAt(at));
  }

  /** The token (up to a blank or the end of the line) at `from`, quoted, for messages. */
  private quoteToken(from: number): string {
    const text = this.text;
    let p = from;
    for (let c = text.charCodeAt(p); p < this.end && c !== SPACE && c !== TAB; c = text.charCodeAt(p)) p += 1;
    const token = text.slice(from, Math.min(p, from + 2 * EXCERPT_RADIUS));
    return JSON.stringify(p - from > 2 * EXCERPT_RADIUS ? `${token}…` : token);
  }

  /** Throws for the current line; `found` defaults to the char at `at`. */
  private fail(at: number, problem: string, found = this.describeChar(at)): never {
    const text = this.text;
    const from = Math.max(this.lineStart, at - EXCERPT_RADIUS);
    const to = Math.min(this.end, at + EXCERPT_RADIUS);
    const excerpt = `${from > this.lineStart ? '…' : ''}${text.slice(from, to)}${to < this.end ? '…' : ''}`;
    const message = `Line ${this.line}, column ${at - this.lineStart + 1}: ${problem}; found ${found} in ${JSON.stringify(excerpt)}`;
    throw new ExpositionParseError(message, this.line);
  }
}

/** Label sets remembered per parse; past this many, new ones are still read but no longer kept. */
const LABEL_SET_CAPACITY = 256;
/** Misses allowed before the hit rate decides: an 8-GPU node with 7 MIG instances each has 64 sets. */
const LABEL_SET_TRIAL = 64;

interface KnownLabelSet {
  /** The raw text from just after "{" through "}". */
  text: string;
  labels: readonly string[];
  /** The set that came right after this one last time. */
  next: KnownLabelSet | undefined;
}

/**
 * The label sets already read in this parse. Exporters repeat a few sets in every family (dcgm-exporter:
 * one per GPU, in the same order each time), so a label set whose raw text equals a known one takes its
 * labels instead of being read again: the result of reading a set depends on nothing but its text, and
 * the copy was checked when first read. Tried first: the set that followed the last match last time;
 * then a lookup by the text up to the first "}" (which misses, harmlessly, when a value contains "}").
 * Equal sets also share their strings, which keeps the visitor's map lookups on already-hashed keys.
 */
class LabelSetCache {
  private readonly byText = new Map<string, KnownLabelSet>();
  private last: KnownLabelSet | undefined;
  private hits = 0;
  private misses = 0;

  /** False once sets rarely repeat (every line has its own): then a lookup costs more than it saves. */
  worthTrying(): boolean {
    return this.misses <= LABEL_SET_TRIAL || this.hits >= this.misses;
  }

  /** When the text at `from` (before `lineEnd`) starts with a known set: copies its labels and returns the position after "}"; else -1. */
  match(text: string, from: number, lineEnd: number, labels: string[]): number {
    const predicted = this.last?.next;
    let found: KnownLabelSet | undefined;
    if (predicted !== undefined && text.slice(from, from + predicted.text.length) === predicted.text) {
      found = predicted;
    } else {
      const close = text.indexOf('}', from);
      found = close === -1 || close >= lineEnd ? undefined : this.byText.get(text.slice(from, close + 1));
      if (found === undefined) {
        this.misses += 1;
        return -1;
      }
    }
    this.hits += 1;
    const known = found.labels;
    const n = known.length;
    if (labels.length !== n) labels.length = n;
    for (let i = 0; i < n; i += 1) labels[i] = known[i];
    this.follow(found);
    return from + found.text.length;
  }

  remember(text: string, labels: readonly string[]): void {
    const known: KnownLabelSet = { text, labels: labels.slice(), next: undefined };
    if (this.byText.size < LABEL_SET_CAPACITY) this.byText.set(text, known);
    this.follow(known);
  }

  private follow(set: KnownLabelSet): void {
    if (this.last !== undefined) this.last.next = set;
    this.last = set;
  }
}
