// Parses one `capacity.yaml` (the key of a capacity ConfigMap) into a CapacityBudget. Every problem is
// collected and reported at once, each naming its path in the file (`pools[1].instance_types`); the
// caller (the ConfigMap source) logs the error and keeps the last valid budget in force.
import { Ajv, type ErrorObject } from 'ajv';
import { LineCounter, parseDocument } from 'yaml';
import type { CapacityBudget } from '../domain/capacity-budget.js';
import { CapacityFileSchema, LABEL_VALUE_PATTERN, NAMESPACE_PATTERN, POOL_ID_PATTERN, type CapacityFile } from './capacity-schema.js';

/** ConfigMaps hold at most 1 MiB; a larger text is refused before it is parsed. */
export const MAX_CAPACITY_FILE_BYTES = 1024 * 1024;
/** Alias expansions allowed (yaml weighs each by the size of what it repeats): stops "billion laughs". */
export const MAX_ALIAS_COUNT = 100;
// A garbage file can yield thousands of problems; the first ones say enough, and log lines stay bounded.
const MAX_PROBLEMS = 50;
const MAX_QUOTED_CHARS = 80;

export class CapacityFileError extends Error {
  readonly code = 'CAPACITY_INVALID';
  /** Where the text came from, e.g. `ConfigMap gpu-system/capacity-acme`. */
  readonly source: string;
  readonly problems: string[];

  constructor(source: string, problems: string[]) {
    super(`Cannot parse capacity.yaml of ${source}: ${problems.join('; ')}`);
    this.name = 'CapacityFileError';
    this.source = source;
    this.problems = problems;
  }
}

/** The budget of a valid file; throws CapacityFileError naming every problem of an invalid one. */
export function parseCapacityFile(text: string, source: string): CapacityBudget {
  return parseCapacityFileWithWarnings(text, source).budget;
}

/**
 * As parseCapacityFile, plus warnings about a valid file: pool or initiative allocations adding up to
 * more than the organization's (overcommit is allowed, but worth a log line).
 */
export function parseCapacityFileWithWarnings(text: string, source: string): { budget: CapacityBudget; warnings: string[] } {
  const file = readDocument(text, source);
  const problems = [...schemaProblems(file), ...crossItemProblems(file)];
  if (problems.length > 0) throw invalid(source, problems);
  const valid = file as CapacityFile;
  const budget = toBudget(valid);
  return { budget, warnings: overcommitWarnings(budget) };
}

function invalid(source: string, problems: string[]): CapacityFileError {
  const shown = problems.length > MAX_PROBLEMS
    ? [...problems.slice(0, MAX_PROBLEMS), `and ${problems.length - MAX_PROBLEMS} more problems`]
    : problems;
  return new CapacityFileError(source, shown);
}

/** The YAML text as a plain mapping, or a CapacityFileError (too large, bad syntax, aliases, empty, not a mapping). */
function readDocument(text: string, source: string): Record<string, unknown> {
  // Each UTF-16 unit takes at least one UTF-8 byte: a text that long needs no counting.
  const bytes = text.length > MAX_CAPACITY_FILE_BYTES ? null : Buffer.byteLength(text, 'utf8');
  if (bytes === null || bytes > MAX_CAPACITY_FILE_BYTES) {
    const size = bytes === null ? `at least ${text.length}` : String(bytes);
    throw invalid(source, [`the file is ${size} bytes, over the 1 MiB (${MAX_CAPACITY_FILE_BYTES} bytes) a ConfigMap may hold`]);
  }
  // prettyErrors is off: its code excerpt runs a regular expression that exhausts memory on deeply
  // nested input. Lines and columns come from the LineCounter instead.
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length > 0) {
    // A stack overflow leaves the parser in a state where what follows is noise: report it alone.
    const overflow = doc.errors.find((error) => /call stack/i.test(error.message));
    throw invalid(
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
  if (doc.contents === null) {
    throw invalid(source, ['the file is empty: it must hold a mapping with at least organization_id and allocated_gpu_hours']);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    const message = (error as Error).message;
    throw invalid(source, [
      /alias count/i.test(message)
        ? `YAML aliases expand too much (more than ${MAX_ALIAS_COUNT} alias ` +
          `uses, weighed by size): refused as a resource exhaustion attempt`
        : `cannot read the YAML document: ${message}`,
    ]);
  }
  if (!isRecord(value)) throw invalid(source, [`the file must hold a mapping (organization_id: …), got ${kindOf(value)}`]);
  return value;
}

// No coercion: a quoted "100" where a number belongs is an error, not a number. useDefaults fills
// period, pools, initiatives and namespaces. verbose adds the failing value and schema to each error.
const validate = new Ajv({
  allErrors: true,
  useDefaults: true,
  coerceTypes: false,
  strict: true,
  verbose: true,
}).compile(CapacityFileSchema);

function schemaProblems(file: Record<string, unknown>): string[] {
  if (validate(file)) return [];
  return [...new Set((validate.errors ?? []).map(describeError))];
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

const PATTERN_WORDS: Record<string, string> = {
  [POOL_ID_PATTERN]: 'letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit)',
  [LABEL_VALUE_PATTERN]: 'a Kubernetes label value: letters, digits, "-", "_" or ' +
    '"." (at most 63, starting and ending with a letter or digit)',
  [NAMESPACE_PATTERN]: 'a Kubernetes namespace name: lowercase letters, digits and ' +
    '"-" (at most 63, starting and ending with a letter or digit)',
};

function describeError(error: ErrorObject): string {
  const path = pathOf(error.instancePath);
  const data: unknown = error.data;
  const got = `, got ${quote(data)}`;
  switch (error.keyword) {
    case 'required':
      return `"${join(path, (error.params as { missingProperty: string }).missingProperty)}" is required`;
    case 'additionalProperties': {
      const key = (error.params as { additionalProperty: string }).additionalProperty;
      const known = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `"${join(path, key)}" is not a known key (allowed: ${known.join(', ')})`;
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
      return `"${path}" must be ${PATTERN_WORDS[pattern] ?? `a string matching ${pattern}`}${got}`;
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
    .reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : join(path, segment)), '');
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/**
 * What JSON Schema cannot say: ids unique across items, an instance type in one pool only (a workload's
 * instance type must map to one pool), a namespace under one initiative only. Reads the file defensively:
 * items the schema already rejected are skipped, so every problem is reported in one pass.
 */
function crossItemProblems(file: Record<string, unknown>): string[] {
  return [
    ...ownershipProblems(file.pools, {
      list: 'pools',
      id: 'pool_id',
      members: 'instance_types',
      member: 'an instance type',
      owner: 'pool',
    }),
    ...ownershipProblems(file.initiatives, {
      list: 'initiatives',
      id: 'initiative_id',
      members: 'namespaces',
      member: 'a namespace',
      owner: 'initiative',
    }),
  ];
}

function ownershipProblems(items: unknown, keys: { list: string; id: string; members: string; member: string; owner: string }): string[] {
  if (!Array.isArray(items)) return [];
  const problems: string[] = [];
  const indexOfId = new Map<string, number>();
  const ownerOf = new Map<string, number>();
  const name = (index: number): string => {
    const id = (items[index] as Record<string, unknown>)[keys.id];
    return typeof id === 'string' ? `${keys.list}[${index}] (${quote(id)})` : `${keys.list}[${index}]`;
  };
  items.forEach((item: unknown, index) => {
    if (!isRecord(item)) return;
    const id = item[keys.id];
    if (typeof id === 'string') {
      const first = indexOfId.get(id);
      if (first === undefined) indexOfId.set(id, index);
      else problems.push(`"${keys.list}[${index}].${keys.id}" must be unique: ` +
        `${quote(id)} is already the ${keys.id} of ${keys.list}[${first}]`);
    }
    const members: unknown = item[keys.members];
    if (!Array.isArray(members)) return;
    for (const member of new Set<unknown>(members)) {
      if (typeof member !== 'string') continue;
      const owner = ownerOf.get(member);
      if (owner === undefined) ownerOf.set(member, index);
      else problems.push(`"${keys.list}[${index}].${keys.members}" lists ${quote(member)}, already ` +
        `listed by ${name(owner)}: ${keys.member} belongs to one ${keys.owner} only`);
    }
  });
  return problems;
}

function toBudget(file: CapacityFile): CapacityBudget {
  return {
    organizationId: file.organization_id,
    period: file.period ?? 'month',
    allocatedGpuHours: file.allocated_gpu_hours,
    pools: (file.pools ?? []).map((pool) => ({
      poolId: pool.pool_id,
      name: pool.name ?? pool.pool_id,
      allocatedGpuHours: pool.allocated_gpu_hours,
      instanceTypes: [...pool.instance_types],
    })),
    initiatives: (file.initiatives ?? []).map((initiative) => ({
      initiativeId: initiative.initiative_id,
      name: initiative.name ?? initiative.initiative_id,
      allocatedGpuHours: initiative.allocated_gpu_hours,
      namespaces: [...(initiative.namespaces ?? [])],
    })),
  };
}

function overcommitWarnings(budget: CapacityBudget): string[] {
  const warnings: string[] = [];
  const total = budget.allocatedGpuHours;
  for (const [list, items] of [['pools', budget.pools], ['initiatives', budget.initiatives]] as const) {
    const sum = items.reduce((acc, item) => acc + item.allocatedGpuHours, 0);
    // A relative tolerance, so 0.1 + 0.2 against 0.3 is not reported.
    if (sum - total > 1e-9 * Math.max(1, total)) {
      warnings.push(
        `The ${list} allocate ${round(sum)} GPU-hours in total, more than the organization's ` +
          `allocated_gpu_hours ${round(total)} (overcommitted by ${round(sum - total)})`,
      );
    }
  }
  return warnings;
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a message: strings quoted (and cut), numbers and booleans as they are. */
function quote(value: unknown): string {
  if (typeof value === 'string') {
    const cut = value.length > MAX_QUOTED_CHARS ? `${value.slice(0, MAX_QUOTED_CHARS)}…` : value;
    return JSON.stringify(cut);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return kindOf(value);
}

/** What a value is, for "got …": `the string "100"`, `a list`, `nothing`. */
function kindOf(value: unknown): string {
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
