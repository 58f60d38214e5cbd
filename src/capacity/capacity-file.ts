// Parses one `capacity.yaml` (the key of a capacity ConfigMap) into a CapacityBudget. Every problem is
// collected and reported at once, each naming its path in the file (`pools[1].instance_types`); the
// caller (the ConfigMap source) logs the error and keeps the last valid budget in force.
import type { CapacityBudget } from '../domain/capacity-budget.js';
import { isRecord, quote, readYamlMapping, rejectFile, schemaChecker, type YamlFileKind } from './yaml-file.js';
import { CAPACITY_PATTERN_WORDS, CapacityFileSchema, type CapacityFile } from './capacity-schema.js';

export { MAX_ALIAS_COUNT, MAX_CONFIGMAP_FILE_BYTES as MAX_CAPACITY_FILE_BYTES } from './yaml-file.js';

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

const CAPACITY_FILE: YamlFileKind = {
  emptyHint: 'a mapping with at least organization_id and allocated_gpu_hours',
  firstKey: 'organization_id',
  invalid: (source, problems) => new CapacityFileError(source, problems),
};

/** The budget of a valid file; throws CapacityFileError naming every problem of an invalid one. */
export function parseCapacityFile(text: string, source: string): CapacityBudget {
  return parseCapacityFileWithWarnings(text, source).budget;
}

/**
 * As parseCapacityFile, plus warnings about a valid file: pool or initiative allocations adding up to
 * more than the organization's (overcommit is allowed, but worth a log line).
 */
export function parseCapacityFileWithWarnings(text: string, source: string): { budget: CapacityBudget; warnings: string[] } {
  const file = readYamlMapping(text, source, CAPACITY_FILE);
  const problems = [...schemaProblems(file), ...crossItemProblems(file)];
  if (problems.length > 0) rejectFile(CAPACITY_FILE, source, problems);
  const valid = file as CapacityFile;
  const budget = toBudget(valid);
  return { budget, warnings: overcommitWarnings(budget) };
}

const schemaProblems = schemaChecker(CapacityFileSchema, CAPACITY_PATTERN_WORDS);

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
    ...(file.allocated_cost === undefined ? {} : { allocatedCost: file.allocated_cost }),
    pools: (file.pools ?? []).map((pool) => ({
      poolId: pool.pool_id,
      name: pool.name ?? pool.pool_id,
      allocatedGpuHours: pool.allocated_gpu_hours,
      ...(pool.allocated_cost === undefined ? {} : { allocatedCost: pool.allocated_cost }),
      instanceTypes: [...pool.instance_types],
    })),
    initiatives: (file.initiatives ?? []).map((initiative) => ({
      initiativeId: initiative.initiative_id,
      name: initiative.name ?? initiative.initiative_id,
      allocatedGpuHours: initiative.allocated_gpu_hours,
      ...(initiative.allocated_cost === undefined ? {} : { allocatedCost: initiative.allocated_cost }),
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
