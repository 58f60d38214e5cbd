// The exposition parser against real exporter payloads (checked sample by sample against the npm
// package parse-prometheus-text-format as an independent oracle), then the edge cases and the hostile
// input a scrape can bring: every rejected payload names its line, says what was expected and shows
// the offending text.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { ExpositionParseError, parseExposition } from '../../../src/telemetry/scrape/exposition-parser.js';
import { exporterCaptures, readExporterCapture as fixture } from '../../fixtures/exporters/exporter-fixtures.js';


interface Sample {
  name: string;
  /** Label pairs sorted by name. */
  labels: Array<[string, string]>;
  value: number;
}

/** Every sample of `text`, its labels copied (the parser reuses its array). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  const count = parseExposition(text, (name, labels, value) => {
    const pairs: Array<[string, string]> = [];
    for (let i = 0; i < labels.length; i += 2) pairs.push([labels[i] ?? '', labels[i + 1] ?? '']);
    samples.push({ name, labels: pairs, value });
  });
  expect(count, 'returned sample count').to.equal(samples.length);
  return samples;
}

/** Labels as an object, for readable assertions on one sample. */
function labelsOf(sample: Sample | undefined): Record<string, string> {
  return Object.fromEntries(sample?.labels ?? []);
}

/** The same samples as parse(), from the oracle. It keeps values as text. */
function parseWithOracle(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const family of parsePrometheusTextFormat(text)) {
    for (const metric of family.metrics) {
      samples.push({ name: family.name, labels: Object.entries(metric.labels ?? {}), value: Number(metric.value) });
    }
  }
  return samples;
}

/** A canonical form of one sample: name, labels sorted by name, value (NaN included) as text. */
function key(sample: Sample): string {
  const labels = [...sample.labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([sample.name, labels, String(sample.value)]);
}

/** Counts of each canonical sample: two multisets are equal when these maps are. */
function multiset(samples: readonly Sample[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const sample of samples) counts.set(key(sample), (counts.get(key(sample)) ?? 0) + 1);
  return counts;
}

/**
 * The text adjusted around two limits of the oracle that Prometheus does not have: it rejects
 * `# HELP name` without text (given a placeholder here), and it drops the last sample when the text
 * does not end with a newline (one is added).
 */
function forOracle(text: string): string {
  const withHelp = text.replace(/^# HELP (\S+)[ \t]*$/gm, '# HELP $1 -');
  return withHelp.endsWith('\n') ? withHelp : `${withHelp}\n`;
}


/** The error parsing `text` throws; fails the test when nothing is thrown or the error is not the parser's. */
function parseError(text: string): ExpositionParseError {
  let thrown: unknown;
  try {
    parseExposition(text, () => undefined);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `parsing ${JSON.stringify(text)} should throw`).to.be.instanceOf(ExpositionParseError);
  const error = thrown as ExpositionParseError;
  expect(error.code).to.equal('EXPOSITION_INVALID');
  return error;
}

describe('parseExposition', () => {
  describe('on real exporter payloads', () => {
    const files = exporterCaptures();

    it('finds the fixture files', () => {
      expect(files.map((f) => f.name)).to.include.members([
        'dcgm/a100-mig-1g.5gb-dcp-metrics-cloud-native-docs.txt',
        'dcgm/datadog-integrations-core-dcgm-tests-fixtures-metrics.txt',
        'nvidia-smi-exporter/h100-80gb-hbm3-driver-590.48.01-load.metrics.txt',
        'nvidia-smi-exporter/h100-mig-driver-590.48.01-load.metrics.txt',
      ]);
    });

    for (const file of files) {
      it(`reads the same samples as parse-prometheus-text-format from ${file.name}`, () => {
        const text = readFileSync(file.path, 'utf8');
        const ours = parse(text);
        const oracle = parseWithOracle(forOracle(text));
        expect(ours.length).to.be.greaterThan(0);
        expect(ours.length).to.equal(oracle.length);
        expect([...multiset(ours)].sort()).to.deep.equal([...multiset(oracle)].sort());
      });
    }

    it('reads the A100 MIG instance series with its GPU_I_ID label', () => {
      const samples = parse(fixture('dcgm/a100-mig-1g.5gb-dcp-metrics-cloud-native-docs.txt'));
      const engine = samples.filter((s) => s.name === 'DCGM_FI_PROF_GR_ENGINE_ACTIVE');
      expect(engine.map((s) => [labelsOf(s).GPU_I_ID, s.value])).to.deep.equal([
        [undefined, 0.99563],
        ['13', 0.995687],
      ]);
      expect(labelsOf(engine[1])).to.deep.equal({
        gpu: '0',
        UUID: 'GPU-34319582-d595-d1c7-d1d2-179bcfa61660',
        device: 'nvidia0',
        GPU_I_PROFILE: '1g.5gb',
        GPU_I_ID: '13',
        Hostname: 'ub20-a100-k8s',
      });
    });

    it('reads the Datadog fixture: T4 memory, label-less dummies and the A10G pod attribution', () => {
      const samples = parse(fixture('dcgm/datadog-integrations-core-dcgm-tests-fixtures-metrics.txt'));
      const fbFree = samples.find((s) => s.name === 'DCGM_FI_DEV_FB_FREE');
      expect(fbFree?.value).to.equal(15109);
      expect(labelsOf(fbFree).modelName).to.equal('Tesla T4');
      const dummy = samples.find((s) => s.name === 'DCGM_FI_DEV_FAN_SPEED');
      expect(dummy).to.deep.equal({ name: 'DCGM_FI_DEV_FAN_SPEED', labels: [], value: 0 });
      const a10g = samples.filter((s) => labelsOf(s).pod === 'ray-1111111');
      expect(a10g).to.have.length.greaterThan(0);
      expect(labelsOf(a10g[0])).to.include({ namespace: 'ray-llm', container: 'ray-worker' });
    });

    it('reads the nvidia_smi exporter H100 payload (SI-scaled exponent values)', () => {
      const samples = parse(fixture('nvidia-smi-exporter/h100-80gb-hbm3-driver-590.48.01-load.metrics.txt'));
      const clock = samples.find((s) => s.name === 'nvidia_smi_clocks_current_graphics_clock_hz');
      expect(clock?.value).to.equal(1.98e9);
      expect(labelsOf(clock)).to.deep.equal({ uuid: '00000000-0000-0000-0000-000000000000' });
    });
  });

  describe('accepts', () => {
    it('decodes the escapes \\\\, \\" and \\n in label values', () => {
      expect(parse('a{x="q\\"uote\\\\back\\nnl"} 1\n')).to.deep.equal([{ name: 'a', labels: [['x', 'q"uote\\back\nnl']], value: 1 }]);
    });

    it('keeps labels in text order whatever the order', () => {
      const [first, second] = parse('m{b="2",a="1"} 1\nm{a="1",b="2"} 2\n');
      expect(first?.labels).to.deep.equal([['b', '2'], ['a', '1']]);
      expect(second?.labels).to.deep.equal([['a', '1'], ['b', '2']]);
    });

    it('hands each sample its own labels when label sets repeat and alternate', () => {
      const lines: string[] = [];
      for (let family = 0; family < 3; family += 1) {
        for (let gpu = 0; gpu < 3; gpu += 1) lines.push(`f${family}{gpu="${gpu}",UUID="GPU-${gpu}"} ${family * 10 + gpu}`);
      }
      lines.push('f3{gpu="1",UUID="GPU-1"} 31', 'f3{gpu="1",UUID="GPU-1",extra="x"} 32', 'f3 33', 'f3{gpu="1",UUID="GPU-1"} 34');
      const samples = parse(`${lines.join('\n')}\n`);
      expect(samples.map((s) => [s.name, labelsOf(s).gpu ?? null, s.labels.length, s.value])).to.deep.equal([
        ['f0', '0', 2, 0], ['f0', '1', 2, 1], ['f0', '2', 2, 2],
        ['f1', '0', 2, 10], ['f1', '1', 2, 11], ['f1', '2', 2, 12],
        ['f2', '0', 2, 20], ['f2', '1', 2, 21], ['f2', '2', 2, 22],
        ['f3', '1', 2, 31], ['f3', '1', 3, 32], ['f3', null, 0, 33], ['f3', '1', 2, 34],
      ]);
      expect(samples.filter((s) => s.labels.length > 0).every((s) => labelsOf(s).UUID === `GPU-${labelsOf(s).gpu}`)).to.equal(true);
    });

    it('reads every line right when label sets never repeat, then when they do', () => {
      const unique = Array.from({ length: 200 }, (_, i) => `m{gpu="${i % 8}",pod="p${i}"} ${i}`);
      const repeated = Array.from({ length: 200 }, (_, i) => `n{gpu="${i % 8}",pod="p${i % 3}"} ${i}`);
      const samples = parse(`${[...unique, ...repeated].join('\n')}\n`);
      expect(samples.map((s) => labelsOf(s))).to.deep.equal([
        ...unique.map((_, i) => ({ gpu: String(i % 8), pod: `p${i}` })),
        ...repeated.map((_, i) => ({ gpu: String(i % 8), pod: `p${i % 3}` })),
      ]);
    });

    it('reads repeated label sets whose values hold "}" or escapes', () => {
      const samples = parse('a{x="}",y="a\\nb"} 1\na{x="}",y="a\\nb"} 2\na{x="}",y="c"} 3\na{x="}",y="a\\nb"} 4\n');
      expect(samples.map((s) => [labelsOf(s).x, labelsOf(s).y, s.value])).to.deep.equal([
        ['}', 'a\nb', 1],
        ['}', 'a\nb', 2],
        ['}', 'c', 3],
        ['}', 'a\nb', 4],
      ]);
    });

    it('reads NaN, +Inf, -Inf and Inf, case-insensitively, as Go does', () => {
      const values = parse('a NaN\nb +Inf\nc -Inf\nd Inf\ne nan\nf inf\ng -INF\nh Infinity\ni -infinity\n').map((s) => s.value);
      expect(values[0]).to.be.NaN;
      expect(values).to.deep.equal([NaN, Infinity, -Infinity, Infinity, NaN, Infinity, -Infinity, Infinity, -Infinity]);
    });

    it('reads decimals and exponents exactly as Number does', () => {
      const texts = ['0', '-0', '42', '+7', '0.000008', '409.692000', '1.98e+09', '2.619e+09', '8.5520809984e+10', '1e-7', '1E3', '.5', '5.', '-1.5e-3', '123456789012345678', '0.1234567890123456789', '1e-400'];
      const values = parse(texts.map((t, i) => `m${i} ${t}`).join('\n')).map((s) => s.value);
      expect(values).to.deep.equal(texts.map((t) => Number(t)));
      expect(Object.is(values[1], -0)).to.equal(true);
    });

    it('does not interpret the DCGM blank sentinel 9223372036854775794: it is a double like any other', () => {
      const [sample] = parse('DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu="0"} 9223372036854775794\n');
      expect(sample?.value).to.equal(Number('9223372036854775794'));
      expect(sample?.value).to.equal(2 ** 63);
    });

    it('accepts and ignores integer timestamps in milliseconds', () => {
      const samples = parse('a 1 1395066363000\nb{x="y"} 2 -3982045\nc 3 +12\nd 4 9223372036854775807\n');
      expect(samples.map((s) => s.value)).to.deep.equal([1, 2, 3, 4]);
    });

    it('accepts CRLF line ends and a last line without newline', () => {
      expect(parse('# TYPE a gauge\r\na{x="1"} 1\r\nb 2\r\n').map((s) => s.value)).to.deep.equal([1, 2]);
      expect(parse('a 1\nb 2').map((s) => s.value)).to.deep.equal([1, 2]);
      expect(parse('a 1\r').map((s) => s.value)).to.deep.equal([1]);
    });

    it('accepts a trailing comma in the label set and an empty label set', () => {
      expect(parse('a{x="1",} 1\nb{} 2\n')).to.deep.equal([
        { name: 'a', labels: [['x', '1']], value: 1 },
        { name: 'b', labels: [], value: 2 },
      ]);
    });

    it('accepts spaces and tabs around tokens, indented lines and blank lines', () => {
      const text = '\n   \n\t\n  a { x = "1" ,\ty="2" , }\t 3  \t\n\tb\t4\t5\t\nc{x="1"}6\n  # HELP c indented comment\n';
      expect(parse(text)).to.deep.equal([
        { name: 'a', labels: [['x', '1'], ['y', '2']], value: 3 },
        { name: 'b', labels: [], value: 4 },
        { name: 'c', labels: [['x', '1']], value: 6 },
      ]);
    });

    it('keeps spaces, braces, commas and non-ASCII text inside label values', () => {
      expect(parse('a{x=" a, b }{ ",y="Größe ✓"} 1\n')[0]?.labels).to.deep.equal([['x', ' a, b }{ '], ['y', 'Größe ✓']]);
    });

    it('accepts metric names with colons and HELP lines without text; ignores other comments', () => {
      const text = '# HELP job:rate\n# TYPE job:rate GAUGE\n# NOTE anything at all: {"x"} \\t\n#\n# help is only a keyword in upper case\njob:rate 1\n';
      expect(parse(text)).to.deep.equal([{ name: 'job:rate', labels: [], value: 1 }]);
    });

    it('accepts every metric type keyword', () => {
      const text = ['counter', 'gauge', 'histogram', 'summary', 'untyped'].map((type, i) => `# TYPE m${i} ${type}`).join('\n');
      expect(parseExposition(text, () => undefined)).to.equal(0);
    });

    it('reads an empty text as no samples', () => {
      expect(parseExposition('', () => undefined)).to.equal(0);
      expect(parseExposition('\n\n# only comments\n', () => undefined)).to.equal(0);
    });
  });

  describe('rejects', () => {
    it('a metric name without value, naming the line', () => {
      const error = parseError('a 1\nDCGM_FI_DEV_GPU_UTIL\n');
      expect(error.line).to.equal(2);
      expect(error.message).to.include('Line 2').and.include('expected a value after metric name "DCGM_FI_DEV_GPU_UTIL"');
    });

    it('a label set without value', () => {
      const error = parseError('a{x="1"}\n');
      expect(error.line).to.equal(1);
      expect(error.message).to.include('expected a value after the label set');
    });

    it('an unterminated label value', () => {
      const error = parseError('a 1\nb 2\nc{x="1} 3\n');
      expect(error.line).to.equal(3);
      expect(error.message).to.include('unterminated value of label "x"').and.include('c{x=\\"1} 3');
    });

    it('a payload cut in the middle of a label set', () => {
      const text = fixture('dcgm/a100-mig-1g.5gb-dcp-metrics-cloud-native-docs.txt');
      const cut = text.slice(0, text.indexOf('UUID=', text.indexOf('DCGM_FI_DEV_FB_FREE')) + 'UUID="GPU-343'.length);
      const error = parseError(cut);
      expect(error.line).to.equal(9);
      expect(error.message).to.include('unterminated value of label "UUID"').and.include('GPU-343');
      expect(parseError('a{gpu="0",').message).to.include('expected a label name or "}"').and.include('the end of the line');
      expect(parseError('a{gpu').message).to.include('expected "=" after label name "gpu"');
      expect(parseError('a{gpu=').message).to.include('expected a double-quoted value for label "gpu"');
      expect(parseError('a{gpu="0"').message).to.include('expected "," or "}" after the value of label "gpu"');
    });

    it('an escape other than \\\\, \\" and \\n, such as \\t', () => {
      const error = parseError('a{x="tab\\there"} 1\n');
      expect(error.message).to.include('invalid escape in the value of label "x"').and.include('"\\\\t"');
      expect(parseError('a{x="end\\').message).to.include('invalid escape');
    });

    it('a duplicate label name, also when a known label set comes first', () => {
      expect(parseError('a{x="1",y="2",x="3"} 1\n').message).to.include('duplicate label name "x"');
      expect(parseError('a{x="1",y="2"} 1\na{x="1",y="2",x="3"} 1\n').line).to.equal(2);
      expect(parseError('a{x="1",y="2"} 1\na{y="1",y="2"} 1\n').message).to.include('duplicate label name "y"');
    });

    it('the reserved label name __name__', () => {
      expect(parseError('a{__name__="b"} 1\n').message).to.include('"__name__" is reserved');
    });

    it('a metric name that starts with a digit or holds other characters', () => {
      expect(parseError('1abc 1\n').message).to.include('expected a metric name');
      expect(parseError('a-b 1\n').message).to.include('expected a space or "{" after metric name "a"');
      expect(parseError('{x="1"} 1\n').message).to.include('expected a metric name');
      expect(parseError('a{1x="1"} 1\n').message).to.include('expected a label name or "}"');
      expect(parseError('a{x-y="1"} 1\n').message).to.include('expected "=" after label name "x"');
      expect(parseError('a{,} 1\n').message).to.include('expected a label name or "}"');
    });

    it('garbage and binary bytes, quoting them readably', () => {
      const error = parseError('a 1\n\u0000\u0001\u0002\u00ff\ufffd 1\n');
      expect(error.line).to.equal(2);
      expect(error.message).to.include('expected a metric name').and.include('\\u0000');
      expect(parseError('<html><body>502 Bad Gateway</body></html>\n').message).to.include('"<"');
    });

    it('a value with trailing characters: 12abc', () => {
      const error = parseError('a 1\nb 12abc\n');
      expect(error.line).to.equal(2);
      expect(error.message).to.include('expected a number, "NaN" or "Inf" as sample value').and.include('"12abc"');
    });

    it('values Number() accepts but Go does not: hex, binary, underscores, empty', () => {
      for (const value of ['0x10', '0X1p4', '0b1', '0o7', '1_000', '']) {
        expect(parseError(`a{x="1"} ${value}\n`).message, value).to.match(/expected (a number|a value)/);
      }
    });

    it('malformed numbers and words: --1, 1e, ., +nan, -NaN, infin, Infinityx', () => {
      for (const value of ['--1', '+-1', '1e', '1e+', '.', '-', '1.2.3', '+nan', '-NaN', 'infin', 'Infinityx', 'undefined']) {
        expect(parseError(`a ${value}\n`).message, value).to.include(`found ${JSON.stringify(value)}`);
      }
    });

    it('a finite-looking value beyond a double (Go: ErrRange)', () => {
      expect(parseError('a 1e400\n').message).to.include('out of range');
      expect(parseError('a -1.5e309\n').message).to.include('out of range');
    });

    it('a non-integer, out-of-range or trailing timestamp', () => {
      expect(parseError('a 1 1.5\n').message).to.include('expected an integer timestamp').and.include('"1.5"');
      expect(parseError('a 1 1e3\n').message).to.include('expected an integer timestamp');
      expect(parseError('a 1 9223372036854775808\n').message).to.include('out of range for a 64-bit integer');
      expect(parseError('a 1 2 3\n').message).to.include('expected the end of the line after the timestamp');
    });

    it('a TYPE line with an unknown, missing or extra type, or an invalid name', () => {
      expect(parseError('# TYPE a gauges\n').message).to.include('expected a metric type (counter, gauge, histogram, summary, untyped) for "a"').and.include('"gauges"');
      expect(parseError('# TYPE a\n').message).to.include('expected a metric type');
      expect(parseError('# TYPE a gauge counter\n').message).to.include('expected the end of the line after the type of "a"');
      expect(parseError('# TYPE 1a gauge\n').message).to.include('expected a metric name after "# TYPE"');
      expect(parseError('# TYPE a-b gauge\n').message).to.include('invalid character in the metric name after "# TYPE"');
      expect(parseError('# HELP\n').message).to.include('expected a metric name after "# HELP"');
    });

    it('errors name the line and column and show an excerpt of at most about 50 characters', () => {
      const long = `a{${Array.from({ length: 20 }, (_, i) => `label${i}="value${i}"`).join(',')}} 1 2 x`;
      const error = parseError(`# TYPE a gauge\n${long}\n`);
      expect(error.line).to.equal(2);
      expect(error.message).to.match(/^Line 2, column \d+: expected the end of the line after the timestamp; found "x" in "…/);
      expect(error.message.length).to.be.lessThan(160);
    });
  });
});
