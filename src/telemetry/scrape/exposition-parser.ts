// Reads the Prometheus text exposition format 0.0.4 (what dcgm-exporter and nvidia_gpu_exporter serve)
// in one pass over char codes and hands each sample to a visitor instead of building objects: the
// sampler parses every GPU node's scrape every interval, so per-sample cost and garbage matter.
// It is as strict as Prometheus' own parser (expfmt's TextParser, Go) on what an exporter writes, so a
// payload Prometheus would reject fails here too, with the line and an excerpt, instead of turning
// into half a scrape.
// Where the speed comes from (measured with callgrind, see the parse benchmark): a sample line of the
// usual shape is read once, to its newline, without looking for the line end first; a label set seen
// before in this parse is matched as one slice and its decoded labels handed over as they are; V8's
// runtime calls (slice comparison, hashing) are kept to about one per line.

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
 * escapes (\\, \", \n) already decoded. The array is the parser's: it is reused between calls and
 * handed again to later samples with the same label text, so copy what you keep and never change it.
 * `value` may be NaN, +Infinity or -Infinity.
 * Names and values are usually slices of `text`, and V8 keeps a whole string alive while a slice of it
 * is: a string kept long after the scrape (a map key, say) holds the payload in memory with it.
 */
export type SampleVisitor = (name: string, labels: readonly string[], value: number) => void;

/** Parses a whole exposition, calling `visit` for every sample; returns the number of samples. Throws ExpositionParseError. */
export function parseExposition(text: string, visit: SampleVisitor): number {
  return new ExpositionScanner(text, visit).run();
}

/**
 * Char codes. A const enum, so that they are compiled in as numbers: V8 reads a module-level const from
 * the module's context, with a type check, at every use in optimized code.
 */
const enum Char {
  Tab = 9,
  Lf = 10,
  Cr = 13,
  Space = 32,
  Quote = 34,
  Hash = 35,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Zero = 48,
  Nine = 57,
  Equals = 61,
  Backslash = 92,
  OpenBrace = 123,
  CloseBrace = 125,
  LowerE = 101,
  LowerN = 110,
  UpperE = 69,
  UpperH = 72,
  UpperL = 76,
  UpperP = 80,
  UpperT = 84,
  UpperY = 89,
}

/** Bits of CLASS. */
const enum Class {
  MetricStart = 1,
  MetricChar = 2,
  LabelStart = 4,
  LabelChar = 8,
  SpecialStart = 16,
}

/** ASCII char classes; every code ≥ 128 is in none (names are ASCII, label values are not scanned with it). */
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c += 1) {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const digit = c >= Char.Zero && c <= Char.Nine;
  if (letter || c === 95 || c === 58) CLASS[c] |= Class.MetricStart | Class.MetricChar;
  if (digit) CLASS[c] |= Class.MetricChar | Class.LabelChar;
  if (letter || c === 95) CLASS[c] |= Class.LabelStart | Class.LabelChar;
}
// i/I (inf, infinity) and n/N (nan): the words Go's strconv.ParseFloat accepts besides numbers.
for (const c of [73, 105, 78, 110]) CLASS[c] |= Class.SpecialStart;

/** 10^0 … 10^22: the powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
/** A mantissa of at most 15 digits is below 2^53, so it and the power of ten are exact (Clinger's fast path). */
const EXACT_DIGITS = 15;

const METRIC_TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

/** Go lowercases the TYPE word; exporters write it lowercase already, so that is tried first. */
function isMetricType(word: string): boolean {
  switch (word) {
    case 'counter':
    case 'gauge':
    case 'histogram':
    case 'summary':
    case 'untyped':
      return true;
    default:
      return METRIC_TYPES.includes(word.toLowerCase());
  }
}

/**
 * The rest of a metric name (its first char is checked apart), read from lastIndex. Irregexp's
 * compiled matcher reads a long name several times faster than a charCodeAt loop; sticky, so that it
 * looks nowhere else, and the star always matches: lastIndex ends up after the name.
 */
const METRIC_NAME_TAIL = /[a-zA-Z0-9_:]*/y;
const EXCERPT_RADIUS = 24;

/** The labels of a sample without a label set. */
const NO_LABELS: readonly string[] = [];

function skipBlanks(text: string, from: number): number {
  let p = from;
  for (let c = text.charCodeAt(p); c === Char.Space || c === Char.Tab; c = text.charCodeAt(p)) p += 1;
  return p;
}

/** The comment keyword at `at`, read without making a string of it. */
function keywordAt(text: string, at: number): 'HELP' | 'TYPE' | null {
  const c = text.charCodeAt(at);
  if (c === Char.UpperH) {
    const isHelp = text.charCodeAt(at + 1) === Char.UpperE &&
      text.charCodeAt(at + 2) === Char.UpperL &&
      text.charCodeAt(at + 3) === Char.UpperP;
    return isHelp ? 'HELP' : null;
  }
  if (c === Char.UpperT) {
    const isType = text.charCodeAt(at + 1) === Char.UpperY &&
      text.charCodeAt(at + 2) === Char.UpperP &&
      text.charCodeAt(at + 3) === Char.UpperE;
    return isType ? 'TYPE' : null;
  }
  return null;
}

/**
 * One parse: the text, the cursor and the current line's bounds. Scans stop at the line's end without a
 * bounds check where they can: the code there is CR, LF or NaN (past the text), which no token accepts.
 * Slices are compared with === rather than startsWith, which V8 runs char by char (several times slower).
 */
class ExpositionScanner {
  private readonly text: string;
  private readonly visit: SampleVisitor;
  /** Where value() stopped reading. */
  private pos = 0;
  private lineStart = 0;
  private line = 0;
  /**
   * The current line's end (before its "\n" or "\r\n") and its "\n" (the text's length on the last
   * line); -1 until lineEnd() finds them. A sample line of the usual shape is read to its "\n"
   * without them, so that its text is scanned once rather than twice; whatever needs the end calls
   * lineEnd() first: comments, label sets read char by char, unusual values and every error.
   */
  private end = -1;
  private newline = -1;
  /** Position of the next backslash at or after the label value being read; -1 when unknown. */
  private nextBackslash = -1;
  /** The labels handed to the visitor for the previous sample: a known set's own array, `scratch` or NO_LABELS. */
  private labels: readonly string[] = NO_LABELS;
  /** Where label sets are read once the cache has given up on keeping them. */
  private readonly scratch: string[] = [];
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
      this.line += 1;
      this.lineStart = start;
      this.end = -1;
      const p = skipBlanks(text, start);
      const c = text.charCodeAt(p);
      if (c === Char.Lf) {
        start = p + 1;
      } else if (c === Char.Hash) {
        this.comment(p);
        start = this.newline + 1;
      } else if ((c === Char.Cr || p >= length) && p >= this.lineEnd()) {
        // A blank line, ended by CRLF or by the end of the text. (A CR before anything else is an invalid name.)
        start = this.newline + 1;
      } else {
        start = this.sample(p);
        samples += 1;
      }
    }
    return samples;
  }

  /** Finds the current line's end and newline (see `end`); returns the end. */
  private lineEnd(): number {
    if (this.end === -1) {
      const text = this.text;
      const start = this.lineStart;
      let newline = text.indexOf('\n', start);
      if (newline === -1) newline = text.length;
      let end = newline;
      if (end > start && text.charCodeAt(end - 1) === Char.Cr) end -= 1;
      this.newline = newline;
      this.end = end;
    }
    return this.end;
  }

  /** Reads the sample line whose name starts at `from`, hands the sample to the visitor and returns where the next line starts. */
  private sample(from: number): number {
    const text = this.text;
    const length = text.length;
    let p = this.metricName(from, null);
    const name = this.previousName;
    let c = text.charCodeAt(p);
    if (c !== Char.OpenBrace) {
      if (c !== Char.Space && c !== Char.Tab) {
        if (p >= this.lineEnd()) this.fail(p, `expected a value after metric name "${name}"`);
        this.fail(p, `expected a space or "{" after metric name "${name}"`);
      }
      p = skipBlanks(text, p);
      c = text.charCodeAt(p);
    }
    let labels = NO_LABELS;
    if (c === Char.OpenBrace) {
      // Go's parser needs no blank between "}" and the value either.
      p = skipBlanks(text, this.labelSet(p + 1));
      labels = this.labels;
      c = text.charCodeAt(p);
    } else {
      this.labels = NO_LABELS;
    }
    // Only a CR, a LF or the end of the text can be the end of the line.
    if ((c === Char.Lf || c === Char.Cr || p >= length) && p >= this.lineEnd()) {
      this.fail(p, `expected a value after ${labels.length === 0 ? `metric name "${name}"` : 'the label set'}`);
    }
    const value = this.value(p);
    p = skipBlanks(text, this.pos);
    c = text.charCodeAt(p);
    let newline: number;
    if (c === Char.Lf || p >= length) {
      newline = p;
    } else if (c === Char.Cr && (p + 1 === length || text.charCodeAt(p + 1) === Char.Lf)) {
      newline = p + 1;
    } else {
      const end = this.lineEnd();
      if (p < end) {
        p = skipBlanks(text, this.timestamp(p));
        if (p < end) this.fail(p, 'expected the end of the line after the timestamp');
      }
      newline = this.newline;
    }
    this.visit(name, labels, value);
    return newline + 1;
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
    // Tested first: what follows a name on a sample line.
    const ends = c === Char.OpenBrace || c === Char.Space || !(c < 128 && (CLASS[c] & Class.MetricChar) !== 0);
    if (previous.length > 0 && ends && text.slice(start, p) === previous) return p;
    c = text.charCodeAt(start);
    if (!(c < 128 && (CLASS[c] & Class.MetricStart) !== 0)) {
      this.fail(start, `expected a metric name${comment === null ? '' : ` after "# ${comment}"`}`);
    }
    METRIC_NAME_TAIL.lastIndex = start + 1;
    METRIC_NAME_TAIL.test(text);
    p = METRIC_NAME_TAIL.lastIndex;
    this.previousName = text.slice(start, p);
    return p;
  }

  /** Reads `name="value",...}` from `from` (just after "{") into this.labels; returns the position after "}". */
  private labelSet(from: number): number {
    const labelSets = this.labelSets;
    if (!labelSets.worthTrying()) {
      const after = this.readLabelSet(from, this.scratch);
      this.labels = this.scratch;
      return after;
    }
    const text = this.text;
    // The set that followed the last one last time, tried here rather than in the cache so that V8
    // inlines it; then any known set.
    const predicted = labelSets.predicted();
    const known = predicted !== null && text.slice(from, from + predicted.text.length) === predicted.text
      ? labelSets.hit(predicted)
      : labelSets.find(text, from);
    if (known !== null) {
      this.labels = known.labels;
      return from + known.text.length;
    }
    const labels: string[] = [];
    const after = this.readLabelSet(from, labels);
    labelSets.remember(text, from, after, labels);
    this.labels = labels;
    return after;
  }

  /** Reads a label set char by char into `out` (which may be this.labels); returns the position after "}". */
  private readLabelSet(from: number, out: string[]): number {
    const text = this.text;
    const previous = this.labels;
    // Label values are bounded by the line end, and errors show the line.
    this.lineEnd();
    // While every name so far is the previous line's name at the same place, the names are known to be
    // distinct (the previous line was checked): the duplicate check runs only from the first difference.
    let sameNames = true;
    let n = 0;
    let p = from;
    for (;;) {
      let c = text.charCodeAt(p);
      if (c === Char.Space || c === Char.Tab) c = text.charCodeAt((p = skipBlanks(text, p)));
      if (c === Char.CloseBrace) {
        p += 1;
        break;
      }
      const nameStart = p;
      let name = n < previous.length ? previous[n] : '';
      p += name.length;
      // The previous line's name at this place, followed by "=", needs no char-by-char read.
      if (name.length === 0 || text.charCodeAt(p) !== Char.Equals || text.slice(nameStart, p) !== name) {
        if (!(c < 128 && (CLASS[c] & Class.LabelStart) !== 0)) this.fail(nameStart, 'expected a label name or "}"');
        p = nameStart + 1;
        for (c = text.charCodeAt(p); c < 128 && (CLASS[c] & Class.LabelChar) !== 0; c = text.charCodeAt(p)) p += 1;
        name = text.slice(nameStart, p);
        sameNames = false;
      }
      if (!sameNames) this.checkNewLabelName(name, out, n, nameStart);
      out[n] = name;
      c = text.charCodeAt(p);
      if (c === Char.Space || c === Char.Tab) c = text.charCodeAt((p = skipBlanks(text, p)));
      if (c !== Char.Equals) this.fail(p, `expected "=" after label name "${name}"`);
      c = text.charCodeAt((p += 1));
      if (c === Char.Space || c === Char.Tab) c = text.charCodeAt((p = skipBlanks(text, p)));
      if (c !== Char.Quote) this.fail(p, `expected a double-quoted value for label "${name}"`);
      p = this.labelValue(p + 1, out, n + 1, name);
      n += 2;
      c = text.charCodeAt(p);
      if (c === Char.Space || c === Char.Tab) c = text.charCodeAt((p = skipBlanks(text, p)));
      if (c === Char.Comma) {
        p += 1;
      } else if (c === Char.CloseBrace) {
        p += 1;
        break;
      } else {
        this.fail(p, `expected "," or "}" after the value of label "${name}"`);
      }
    }
    if (out.length !== n) out.length = n;
    return p;
  }

  /** Rejects a label name already in the first `count` entries of `labels`, and the reserved `__name__`. */
  private checkNewLabelName(name: string, labels: readonly string[], count: number, at: number): void {
    if (name === '__name__') this.fail(at, 'label name "__name__" is reserved');
    for (let j = 0; j < count; j += 2) {
      if (labels[j] === name) this.fail(at, `duplicate label name "${name}"`);
    }
  }

  /** Reads a label value from `from` (just after the opening quote) into out[index]; returns the position after the closing quote. */
  private labelValue(from: number, out: string[], index: number, labelName: string): number {
    const text = this.text;
    const end = this.lineEnd();
    let quote = text.indexOf('"', from);
    if (quote === -1 || quote > end) quote = end;
    if (this.nextBackslash < from) {
      this.nextBackslash = text.indexOf('\\', from);
      if (this.nextBackslash === -1) this.nextBackslash = text.length;
    }
    if (this.nextBackslash < quote) return this.escapedLabelValue(from, out, index, labelName);
    if (quote === end) this.fail(end, `unterminated value of label "${labelName}", expected a closing double quote`);
    out[index] = text.slice(from, quote);
    return quote + 1;
  }

  /** The slow path for a value with a backslash: decodes \\, \" and \n, and rejects any other escape. */
  private escapedLabelValue(from: number, out: string[], index: number, labelName: string): number {
    const text = this.text;
    const end = this.lineEnd();
    let decoded = '';
    let chunk = from;
    let p = from;
    for (;;) {
      if (p >= end) this.fail(end, `unterminated value of label "${labelName}", expected a closing double quote`);
      const c = text.charCodeAt(p);
      if (c === Char.Quote) break;
      if (c !== Char.Backslash) {
        p += 1;
        continue;
      }
      decoded += text.slice(chunk, p);
      const escaped = p + 1 < end ? text.charCodeAt(p + 1) : -1;
      if (escaped === Char.Backslash) decoded += '\\';
      else if (escaped === Char.Quote) decoded += '"';
      else if (escaped === Char.LowerN) decoded += '\n';
      else this.fail(
        p,
        `invalid escape in the value of label "${labelName}" (only \\\\, \\" and \\n are allowed)`,
        JSON.stringify(text.slice(p, p + 2)),
      );
      p += 2;
      chunk = p;
    }
    out[index] = decoded + text.slice(chunk, p);
    this.nextBackslash = -1;
    return p + 1;
  }

  /**
   * Reads the sample value at `from` and leaves this.pos after it, as fullValue() does. This reads the
   * values exporters write, digits with an optional fraction ending the line or followed by a blank,
   * and is small enough for V8 to inline; anything else is read again by fullValue().
   */
  private value(from: number): number {
    const text = this.text;
    let p = from;
    let c = text.charCodeAt(p);
    let mantissa = 0;
    for (; c >= Char.Zero && c <= Char.Nine; c = text.charCodeAt(p)) {
      mantissa = mantissa * 10 + (c - Char.Zero);
      p += 1;
    }
    let digits = p - from;
    let fraction = 0;
    if (c === Char.Dot) {
      p += 1;
      const fractionStart = p;
      for (c = text.charCodeAt(p); c >= Char.Zero && c <= Char.Nine; c = text.charCodeAt(p)) {
        mantissa = mantissa * 10 + (c - Char.Zero);
        p += 1;
      }
      fraction = p - fractionStart;
      digits += fraction;
    }
    if (digits === 0 || digits > EXACT_DIGITS || !(c === Char.Lf || c === Char.Space || c === Char.Tab || p >= text.length)) {
      return this.fullValue(from);
    }
    this.pos = p;
    // Both exact (see EXACT_DIGITS), so the quotient is the correctly rounded value, as Go's.
    return fraction === 0 ? mantissa : mantissa / POW10[fraction];
  }

  /**
   * Reads the sample value at `from` and leaves this.pos after it. Accepts what Go's strconv.ParseFloat
   * accepts in base 10, as Prometheus does: [+-]digits[.digits][(e|E)[+-]digits] with at least one
   * digit, `inf`/`infinity` with an optional sign and `nan`, case-insensitive. Hex, underscores and a
   * finite-looking number that overflows a double (Go's ErrRange) are errors.
   */
  private fullValue(from: number): number {
    const text = this.text;
    let p = from;
    let c = text.charCodeAt(p);
    let negative = false;
    if (c === Char.Plus || c === Char.Minus) {
      negative = c === Char.Minus;
      p += 1;
      c = text.charCodeAt(p);
    }
    if (c < 128 && (CLASS[c] & Class.SpecialStart) !== 0) return this.specialValue(from, p, negative);
    let mantissa = 0;
    const integerStart = p;
    for (; c >= Char.Zero && c <= Char.Nine; c = text.charCodeAt(p)) {
      mantissa = mantissa * 10 + (c - Char.Zero);
      p += 1;
    }
    let digits = p - integerStart;
    let fraction = 0;
    if (c === Char.Dot) {
      p += 1;
      const fractionStart = p;
      for (c = text.charCodeAt(p); c >= Char.Zero && c <= Char.Nine; c = text.charCodeAt(p)) {
        mantissa = mantissa * 10 + (c - Char.Zero);
        p += 1;
      }
      fraction = p - fractionStart;
      digits += fraction;
    }
    if (digits === 0) this.failValue(from);
    let exponent = 0;
    if (c === Char.LowerE || c === Char.UpperE) {
      p += 1;
      c = text.charCodeAt(p);
      let exponentNegative = false;
      if (c === Char.Plus || c === Char.Minus) {
        exponentNegative = c === Char.Minus;
        p += 1;
        c = text.charCodeAt(p);
      }
      if (!(c >= Char.Zero && c <= Char.Nine)) this.failValue(from);
      for (; c >= Char.Zero && c <= Char.Nine; c = text.charCodeAt(p)) {
        // Capped: past 10^±400 the double is 0 or Infinity anyway, and Number() gets the slow path.
        if (exponent < 100_000) exponent = exponent * 10 + (c - Char.Zero);
        p += 1;
      }
      if (exponentNegative) exponent = -exponent;
    }
    // The number must end the token; only a CR, a LF or the end of the text can end the line.
    if (c !== Char.Space && c !== Char.Tab && c !== Char.Lf && p < text.length && (c !== Char.Cr || p < this.lineEnd())) {
      this.failValue(from);
    }
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
    const end = this.lineEnd();
    let p = wordStart;
    for (let c = text.charCodeAt(p); p < end && c !== Char.Space && c !== Char.Tab; c = text.charCodeAt(p)) p += 1;
    const word = text.slice(wordStart, p).toLowerCase();
    this.pos = p;
    if (word === 'inf' || word === 'infinity') return negative ? -Infinity : Infinity;
    if (word === 'nan' && wordStart === from) return NaN;
    return this.failValue(from);
  }

  /**
   * Reads an optional-sign integer timestamp in ms at `from` (ignored: samples are stamped by the
   * scraper); returns the position after it.
   */
  private timestamp(from: number): number {
    const text = this.text;
    const end = this.lineEnd();
    let p = from;
    let c = text.charCodeAt(p);
    const negative = c === Char.Minus;
    if (c === Char.Plus || c === Char.Minus) {
      p += 1;
      c = text.charCodeAt(p);
    }
    const digitsStart = p;
    for (; c >= Char.Zero && c <= Char.Nine; c = text.charCodeAt(p)) p += 1;
    if (p === digitsStart || (p < end && c !== Char.Space && c !== Char.Tab)) {
      this.fail(from, 'expected an integer timestamp in milliseconds after the value', this.quoteToken(from));
    }
    // Go's strconv.ParseInt(…, 10, 64): more than an int64 is an error.
    let first = digitsStart;
    while (first < p - 1 && text.charCodeAt(first) === Char.Zero) first += 1;
    const significant = text.slice(first, p);
    const limit = negative ? '9223372036854775808' : '9223372036854775807';
    if (significant.length > limit.length || (significant.length === limit.length && significant > limit)) {
      this.fail(from, 'timestamp is out of range for a 64-bit integer', this.quoteToken(from));
    }
    return p;
  }

  /**
   * The line whose "#" is at `hash`. `# HELP name [text]` and `# TYPE name type` must name a valid
   * metric (and TYPE a known type, case-insensitive as in Go); any other comment is ignored. HELP text
   * is not read: nothing here uses it.
   */
  private comment(hash: number): void {
    const text = this.text;
    const end = this.lineEnd();
    let p = skipBlanks(text, hash + 1);
    const keyword = keywordAt(text, p);
    p += 4;
    let c = text.charCodeAt(p);
    // Another comment, or a longer word such as "# HELPER".
    if (keyword === null || (p < end && c !== Char.Space && c !== Char.Tab)) return;
    p = this.metricName(skipBlanks(text, p), keyword);
    c = text.charCodeAt(p);
    if (p < end && c !== Char.Space && c !== Char.Tab) this.fail(p, `invalid character in the metric name after "# ${keyword}"`);
    if (keyword === 'HELP') return;
    const name = this.previousName;
    p = skipBlanks(text, p);
    const typeStart = p;
    for (c = text.charCodeAt(p); p < end && c !== Char.Space && c !== Char.Tab; c = text.charCodeAt(p)) p += 1;
    if (!isMetricType(text.slice(typeStart, p))) {
      const found = typeStart < end ? this.quoteToken(typeStart) : 'the end of the line';
      this.fail(typeStart, `expected a metric type (${METRIC_TYPES.join(', ')}) for "${name}"`, found);
    }
    p = skipBlanks(text, p);
    if (p < end) this.fail(p, `expected the end of the line after the type of "${name}"`);
  }

  private failValue(from: number): never {
    return this.fail(from, 'expected a number, "NaN" or "Inf" as sample value', this.quoteToken(from));
  }

  private describeChar(at: number): string {
    return at >= this.lineEnd() ? 'the end of the line' : JSON.stringify(this.text.charAt(at));
  }

  /** The token (up to a blank or the end of the line) at `from`, quoted, for messages. */
  private quoteToken(from: number): string {
    const text = this.text;
    const end = this.lineEnd();
    let p = from;
    for (let c = text.charCodeAt(p); p < end && c !== Char.Space && c !== Char.Tab; c = text.charCodeAt(p)) p += 1;
    const token = text.slice(from, Math.min(p, from + 2 * EXCERPT_RADIUS));
    return JSON.stringify(p - from > 2 * EXCERPT_RADIUS ? `${token}…` : token);
  }

  /** Throws for the current line; `found` defaults to the char at `at`. */
  private fail(at: number, problem: string, found = this.describeChar(at)): never {
    const text = this.text;
    const end = this.lineEnd();
    const from = Math.max(this.lineStart, at - EXCERPT_RADIUS);
    const to = Math.min(end, at + EXCERPT_RADIUS);
    const excerpt = `${from > this.lineStart ? '…' : ''}${text.slice(from, to)}${to < end ? '…' : ''}`;
    const message = `Line ${this.line}, column ${at - this.lineStart + 1}: ${problem}; found ${found} in ${JSON.stringify(excerpt)}`;
    throw new ExpositionParseError(message, this.line);
  }
}

/** Label sets remembered per parse; past this many, new ones are still read but no longer kept. */
const LABEL_SET_CAPACITY = 256;
/** Misses allowed before the hit rate decides: an 8-GPU node with 7 MIG instances each has 64 sets. */
const LABEL_SET_TRIAL = 64;

/** An object without properties, only looked up in (see LabelSetCache.remember). */
const NO_PROPERTIES: object = Object.create(null) as object;

class KnownLabelSet {
  /** The raw text from just after "{" through "}". It holds no newline (a label value cannot). */
  readonly text: string;
  /** The decoded labels, handed to the visitor as they are for every sample with this text. */
  readonly labels: readonly string[];
  /** The set that came right after this one last time. */
  next: KnownLabelSet | null = null;

  constructor(text: string, labels: readonly string[]) {
    this.text = text;
    this.labels = labels;
  }
}

/**
 * The label sets already read in this parse. Exporters repeat a few sets in every family (dcgm-exporter:
 * one per GPU, in the same order each time), so a label set whose raw text equals a known one takes its
 * labels instead of being read again: the result of reading a set depends on nothing but its text, and
 * the set was checked when first read. Tried first: the set that followed the last match last time;
 * then a lookup by the text up to the first "}" (which misses, harmlessly, when a value contains "}").
 * Equal sets also share their strings, which keeps the visitor's map lookups on already-hashed keys.
 */
class LabelSetCache {
  private readonly byText = new Map<string, KnownLabelSet>();
  private last: KnownLabelSet | null = null;
  private hits = 0;
  private misses = 0;
  /**
   * The key the last miss looked up, and where: a set read right after is remembered by it when it is
   * the whole set, as its hash is computed already.
   */
  private missKey = '';
  private missFrom = -1;

  /** False once sets rarely repeat (every line has its own): then a lookup costs more than it saves. */
  worthTrying(): boolean {
    return this.misses <= LABEL_SET_TRIAL || this.hits >= this.misses;
  }

  /** The set that came after the last one matched or read the last time it was: the likely next one. */
  predicted(): KnownLabelSet | null {
    const last = this.last;
    return last === null ? null : last.next;
  }

  /** Counts a match of `set` (found by its caller) and returns it. */
  hit(set: KnownLabelSet): KnownLabelSet {
    this.hits += 1;
    this.follow(set);
    return set;
  }

  /** The known set the text at `from` starts with, or null. A match cannot run past the line: no known text holds a newline. */
  find(text: string, from: number): KnownLabelSet | null {
    const close = text.indexOf('}', from);
    const key = close === -1 ? '' : text.slice(from, close + 1);
    const found = key === '' ? undefined : this.byText.get(key);
    if (found === undefined) {
      this.misses += 1;
      this.missKey = key;
      this.missFrom = from;
      return null;
    }
    return this.hit(found);
  }

  /** Keeps the set just read from `from` to `after` (its labels array becomes the cache's). */
  remember(text: string, from: number, after: number, labels: readonly string[]): void {
    const key = from === this.missFrom && after - from === this.missKey.length ? this.missKey : text.slice(from, after);
    // Looking a string up as a property name makes V8 internalize it: the slice becomes a reference to
    // a flat copy, which the many later comparisons with this set read directly rather than through
    // the whole payload (measured: a third cheaper per comparison).
    Reflect.has(NO_PROPERTIES, key);
    const known = new KnownLabelSet(key, labels);
    if (this.byText.size < LABEL_SET_CAPACITY) this.byText.set(key, known);
    this.follow(known);
  }

  private follow(set: KnownLabelSet): void {
    if (this.last !== null) this.last.next = set;
    this.last = set;
  }
}
