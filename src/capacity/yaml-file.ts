// Reading an operator's YAML file out of a ConfigMap key (capacity.yaml, prices.yaml): bounded in size
// and alias expansion, one mapping, checked against its JSON Schema with every problem named by its
// path in the file (`pools[1].instance_types`) and reported at once. Each file kind states what an
// error of its own is called; what a schema cannot say stays with the file kind.
import { Ajv, type ErrorObject } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { LineCounter, parseDocument } from 'yaml';

/** ConfigMaps hold at most 1 MiB; a larger text is refused before it is parsed. */
export const MAX_CONFIGMAP_FILE_BYTES = 1024 * 1024;
/** Alias expansions allowed (yaml weighs each by the size of what it repeats): stops "billion laughs". */
export const MAX_ALIAS_COUNT = 100;
// A garbage file can yield thousands of problems; the first ones say enough, and log lines stay bounded.
const MAX_PROBLEMS = 50;
const MAX_QUOTED_CHARS = 80;

/** Makes the file kind's error from the problems found (already capped at MAX_PROBLEMS). */
export type InvalidFile = (source: string, problems: string[]) => Error;

export interface YamlFileKind {
  /** What an empty file must hold, e.g. `a mapping with at least organization_id and allocated_gpu_hours`. */
  emptyHint: string;
  /** The first key of the mapping, for the "must hold a mapping (organization_id: …)" message. */
  firstKey: string;
  invalid: InvalidFile;
}

/** Throws the kind's error naming every problem; the list is cut at MAX_PROBLEMS with a count of the rest. */
export function rejectFile(kind: YamlFileKind, source: string, problems: string[]): never {
  const shown = problems.length > MAX_PROBLEMS
    ? [...problems.slice(0, MAX_PROBLEMS), `and ${problems.length - MAX_PROBLEMS} more problems`]
    : problems;
  throw kind.invalid(source, shown);
}

/** The YAML text as a plain mapping, or the kind's error (too large, bad syntax, aliases, empty, not a mapping). */
export function readYamlMapping(text: string, source: string, kind: YamlFileKind): Record<string, unknown> {
  // Each UTF-16 unit takes at least one UTF-8 byte: a text that long needs no counting.
  const bytes = text.length > MAX_CONFIGMAP_FILE_BYTES ? null : Buffer.byteLength(text, 'utf8');
  if (bytes === null || bytes > MAX_CONFIGMAP_FILE_BYTES) {
    const size = bytes === null ? `at least ${text.length}` : String(bytes);
    rejectFile(kind, source, [`the file is ${size} bytes, over the 1 MiB (${MAX_CONFIGMAP_FILE_BYTES} bytes) a ConfigMap may hold`]);
  }
  // prettyErrors is off: its code excerpt runs a regular expression that exhausts memory on deeply
  // nested input. Lines and columns come from the LineCounter instead.
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // A stack overflow leaves the parser in a state where what follows is noise: report it alone.
    const overflow = doc.errors.find((error) => /call stack/i.test(error.message));
    rejectFile(
      kind,
      source,
      (overflow === undefined ? doc.errors : [overflow]).map((error) => {
        const { line, col } = lines.linePos(error.pos[0]);
        const what =
          error.code === 'MULTIPLE_DOCS'
            ? 'the file holds more than one YAML document'
            : /call stack/i.test(error.message)
              ? 'collections are nested too deeply'
              : lowerFirst(error.message);
        return `YAML syntax error at line ${line}, column ${col}: ${what}`;
      }),
    );
  }
  if (doc.contents === null) rejectFile(kind, source, [`the file is empty: it must hold ${kind.emptyHint}`]);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = (error as Error).message;
    rejectFile(kind, source, [
      /alias count/i.test(message)
        ? `YAML aliases expand too much (more than ${MAX_ALIAS_COUNT} alias ` +
          `uses, weighed by size): refused as a resource exhaustion attempt`
        : `cannot read the YAML document: ${message}`,
    ]);
  }
  if (!isRecord(value)) rejectFile(kind, source, [`the file must hold a mapping (${kind.firstKey}: …), got ${kindOf(value)}`]);
  return value;
}

/**
 * A checker of the schema: the problems of a file, each in words. No coercion: a quoted "100" where a
 * number belongs is an error, not a number. useDefaults fills the defaults in place. `patternWords`
 * says in words what each pattern of the schema allows.
 */
export function schemaChecker(
  schema: TSchema,
  patternWords: Readonly<Record<string, string>>,
): (file: Record<string, unknown>) => string[] {
  // verbose adds the failing value and schema to each error.
  const validate = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: true, verbose: true }).compile(schema);
  return (file) => (validate(file) ? [] : [...new Set((validate.errors ?? []).map((error) => describeError(error, patternWords)))]);
}

const TYPE_NAMES: Record<string, string> = {
  number: 'a number',
  integer: 'a whole number',
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  null: 'empty',
};

function describeError(error: ErrorObject, patternWords: Readonly<Record<string, string>>): string {
  const path = pathOf(error.instancePath);
  const data: unknown = error.data;
  const got = `, got ${quote(data)}`;
  switch (error.keyword) {
    case 'required':
      return `"${joinPath(path, (error.params as { missingProperty: string }).missingProperty)}" is required`;
    case 'additionalProperties': {
      const key = (error.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `"${joinPath(path, key)}" is not a known key (allowed: ${known.join(', ')})`;
    }
    case 'type': {
      const expected = String((error.params as { type: string }).type);
      return `"${path}" must be ${TYPE_NAMES[expected] ?? expected}, got ${kindOf(data)}`;
    }
    case 'enum':
      return `"${path}" must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')}${got}`;
    case 'minimum':
    case 'exclusiveMinimum': {
      const { limit, comparison } = error.params as { limit: number; comparison: string };
      return limit === 0 && comparison === '>=' ? `"${path}" must not be negative${got}` : `"${path}" must be ${comparison} ${limit}${got}`;
    }
    case 'minLength':
      return (error.params as { limit: number }).limit === 1
        ? `"${path}" must not be empty`
        : `"${path}" must be at least ${(error.params as { limit: number }).limit} characters${got}`;
    case 'maxLength':
      return `"${path}" must be at most ${(error.params as { limit: number }).limit} ` +
        `characters, got ${String(data).length}: ${quote(data)}`;
    case 'pattern': {
      const pattern = (error.params as { pattern: string }).pattern;
      return `"${path}" must be ${patternWords[pattern] ?? `a string matching ${pattern}`}${got}`;
    }
    case 'minItems': {
      const limit = (error.params as { limit: number }).limit;
      return limit === 1 ? `"${path}" must list at least one item` : `"${path}" must list at least ${limit} items`;
    }
    case 'uniqueItems': {
      const { i, j } = error.params as { i: number; j: number };
      const item = Array.isArray(data) ? (data[i] as unknown) : undefined;
      return `"${path}" lists ${quote(item)} twice (items ${Math.min(i, j)} and ${Math.max(i, j)})`;
    }
    default:
      return `"${path}" ${error.message ?? 'is invalid'}${got}`;
  }
}

/** `/pools/1/instance_types` → `pools[1].instance_types`. */
function pathOf(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : joinPath(path, segment)), '');
}

export function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a message: strings quoted (and cut), numbers and booleans as they are. */
export function quote(value: unknown): string {
  if (typeof value === 'string') {
    const cut = value.length > MAX_QUOTED_CHARS ? `${value.slice(0, MAX_QUOTED_CHARS)}…` : value;
    return JSON.stringify(cut);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return kindOf(value);
}

/** What a value is, for "got …": `the string "100"`, `a list`, `nothing`. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (an empty value)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (typeof value === 'number') return `the number ${String(value)}`;
  return String(value);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
