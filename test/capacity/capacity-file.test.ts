// parseCapacityFile: capacity.yaml (DESIGN "Capacity") → CapacityBudget, every problem reported at once
// naming its path in the file; and docs/capacity.schema.json, generated from the same schema.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse as parseYaml } from 'yaml';
import {
  CapacityFileError,
  MAX_CAPACITY_FILE_BYTES,
  parseCapacityFile,
  parseCapacityFileWithWarnings,
} from '../../src/capacity/capacity-file.js';
import type { CapacityBudget } from '../../src/domain/capacity-budget.js';
import { CAPACITY_SCHEMA_ID, CAPACITY_SCHEMA_PATH, renderCapacitySchema } from '../../scripts/capacity-schema.js';

const SOURCE = 'ConfigMap gpu-system/capacity-acme';

/** The example of DESIGN.md "Capacity". */
const DESIGN_EXAMPLE = `organization_id: org-acme
period: month            # month | quarter | year | total
allocated_gpu_hours: 100000
pools:
  - pool_id: h100
    name: H100 on-demand
    allocated_gpu_hours: 60000
    instance_types: [p5.48xlarge, a3-highgpu-8g]
initiatives:
  - initiative_id: llm-research
    name: LLM Research
    allocated_gpu_hours: 30000
    namespaces: [llm-train, llm-eval]   # optional: these namespaces belong to the initiative
`;

const DESIGN_BUDGET: CapacityBudget = {
  organizationId: 'org-acme',
  period: 'month',
  allocatedGpuHours: 100000,
  pools: [{ poolId: 'h100', name: 'H100 on-demand', allocatedGpuHours: 60000, instanceTypes: ['p5.48xlarge', 'a3-highgpu-8g'] }],
  initiatives: [{ initiativeId: 'llm-research', name: 'LLM Research', allocatedGpuHours: 30000, namespaces: ['llm-train', 'llm-eval'] }],
};

/** A valid file with two pools and two initiatives, for tests that break one thing in it. */
const TWO_OF_EACH = `organization_id: org-acme
allocated_gpu_hours: 1000
pools:
  - pool_id: h100
    allocated_gpu_hours: 600
    instance_types: [p5.48xlarge]
  - pool_id: a100
    allocated_gpu_hours: 300
    instance_types: [p4d.24xlarge]
initiatives:
  - initiative_id: llm-research
    allocated_gpu_hours: 500
    namespaces: [llm-train]
  - initiative_id: vision
    allocated_gpu_hours: 400
    namespaces: [vision]
`;

/** The CapacityFileError parsing `text` throws (the test fails when nothing is thrown). */
function errorOf(text: string): CapacityFileError {
  let thrown: unknown;
  try {
    parseCapacityFile(text, SOURCE);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'parseCapacityFile should have thrown').to.be.instanceOf(CapacityFileError);
  return thrown as CapacityFileError;
}

function problemsOf(text: string): string[] {
  const error = errorOf(text);
  expect(error.code).to.equal('CAPACITY_INVALID');
  expect(error.message).to.equal(`Cannot parse capacity.yaml of ${SOURCE}: ${error.problems.join('; ')}`);
  return error.problems;
}

describe('capacity/capacity-file', () => {
  describe('valid files', () => {
    it('parses the DESIGN example into its CapacityBudget, with no warning', () => {
      expect(parseCapacityFileWithWarnings(DESIGN_EXAMPLE, SOURCE)).to.deep.equal({ budget: DESIGN_BUDGET, warnings: [] });
      expect(parseCapacityFile(DESIGN_EXAMPLE, SOURCE)).to.deep.equal(DESIGN_BUDGET);
    });

    it('defaults period to month, names to ids and absent lists to empty', () => {
      const text = `organization_id: org-acme
allocated_gpu_hours: 10
pools:
  - pool_id: h100
    allocated_gpu_hours: 6
    instance_types: [p5.48xlarge]
initiatives:
  - initiative_id: llm-research
    allocated_gpu_hours: 3
`;
      expect(parseCapacityFile(text, SOURCE)).to.deep.equal({
        organizationId: 'org-acme',
        period: 'month',
        allocatedGpuHours: 10,
        pools: [{ poolId: 'h100', name: 'h100', allocatedGpuHours: 6, instanceTypes: ['p5.48xlarge'] }],
        initiatives: [{ initiativeId: 'llm-research', name: 'llm-research', allocatedGpuHours: 3, namespaces: [] }],
      });
      expect(parseCapacityFile('organization_id: org-acme\nallocated_gpu_hours: 0\n', SOURCE)).to.deep.equal({
        organizationId: 'org-acme', period: 'month', allocatedGpuHours: 0, pools: [], initiatives: [],
      });
    });

    it('accepts every period and fractional GPU-hours', () => {
      for (const period of ['month', 'quarter', 'year', 'total'] as const) {
        const budget = parseCapacityFile(`organization_id: o\nperiod: ${period}\nallocated_gpu_hours: 12.5\n`, SOURCE);
        expect(budget).to.include({ period, allocatedGpuHours: 12.5 });
      }
    });

    it('accepts a few YAML aliases', () => {
      const text = `organization_id: &org org-acme
allocated_gpu_hours: &hours 100
pools:
  - pool_id: h100
    name: *org
    allocated_gpu_hours: *hours
    instance_types: [p5.48xlarge]
`;
      expect(parseCapacityFile(text, SOURCE).pools[0]).to.deep.equal({ poolId: 'h100', name: 'org-acme', allocatedGpuHours: 100, instanceTypes: ['p5.48xlarge'] });
    });

    it('warns, without refusing, when pools or initiatives allocate more than the organization (overcommit)', () => {
      const text = TWO_OF_EACH.replace('allocated_gpu_hours: 1000', 'allocated_gpu_hours: 800');
      const { budget, warnings } = parseCapacityFileWithWarnings(text, SOURCE);
      expect(budget.allocatedGpuHours).to.equal(800);
      expect(warnings).to.deep.equal([
        'The pools allocate 900 GPU-hours in total, more than the organization\'s allocated_gpu_hours 800 (overcommitted by 100)',
        'The initiatives allocate 900 GPU-hours in total, more than the organization\'s allocated_gpu_hours 800 (overcommitted by 100)',
      ]);
      expect(parseCapacityFile(text, SOURCE)).to.deep.equal(budget);
    });

    it('does not warn when the allocations add up to exactly the organization\'s, fractions included', () => {
      const text = `organization_id: o
allocated_gpu_hours: 0.3
initiatives:
  - {initiative_id: a, allocated_gpu_hours: 0.1}
  - {initiative_id: b, allocated_gpu_hours: 0.2}
`;
      expect(parseCapacityFileWithWarnings(text, SOURCE).warnings).to.deep.equal([]);
    });

    it('returns lists that do not share the parsed document (aliases included)', () => {
      const text = `organization_id: o
allocated_gpu_hours: 1
initiatives:
  - {initiative_id: a, allocated_gpu_hours: 1, namespaces: &ns [team-a]}
`;
      const first = parseCapacityFile(text, SOURCE);
      first.initiatives[0]?.namespaces.push('mutated');
      expect(parseCapacityFile(text, SOURCE).initiatives[0]?.namespaces).to.deep.equal(['team-a']);
    });
  });

  describe('schema problems', () => {
    it('refuses a number given as a string, quoting it', () => {
      expect(problemsOf('organization_id: org-acme\nallocated_gpu_hours: "100"\n')).to.deep.equal([
        '"allocated_gpu_hours" must be a number, got the string "100"',
      ]);
    });

    it('refuses unknown keys, naming each with its path and the allowed keys', () => {
      const text = TWO_OF_EACH.replace('organization_id: org-acme', 'organization_id: org-acme\nperiods: month').replace(
        '    instance_types: [p4d.24xlarge]',
        '    instance_type: [p4d.24xlarge]',
      );
      expect(problemsOf(text)).to.deep.equal([
        '"periods" is not a known key (allowed: organization_id, period, allocated_gpu_hours, allocated_cost, pools, initiatives)',
        '"pools[1].instance_types" is required',
        '"pools[1].instance_type" is not a known key (allowed: pool_id, name, allocated_gpu_hours, allocated_cost, instance_types)',
      ]);
    });

    it('refuses a period outside month, quarter, year, total', () => {
      expect(problemsOf('organization_id: o\nperiod: monthly\nallocated_gpu_hours: 1\n')).to.deep.equal([
        '"period" must be one of month, quarter, year, total, got "monthly"',
      ]);
    });

    it('names the missing required keys', () => {
      expect(problemsOf('period: month\n')).to.deep.equal(['"organization_id" is required', '"allocated_gpu_hours" is required']);
      expect(problemsOf('organization_id: o\nallocated_gpu_hours: 1\npools:\n  - name: x\n')).to.deep.equal([
        '"pools[0].pool_id" is required',
        '"pools[0].allocated_gpu_hours" is required',
        '"pools[0].instance_types" is required',
      ]);
    });

    it('refuses a negative, empty or infinite allocation, naming its path', () => {
      const text = TWO_OF_EACH.replace('allocated_gpu_hours: 600', 'allocated_gpu_hours: -5')
        .replace('allocated_gpu_hours: 500', 'allocated_gpu_hours:')
        .replace('allocated_gpu_hours: 400', 'allocated_gpu_hours: .inf');
      expect(problemsOf(text)).to.deep.equal([
        '"pools[0].allocated_gpu_hours" must not be negative, got -5',
        '"initiatives[0].allocated_gpu_hours" must be a number, got nothing (an empty value)',
        '"initiatives[1].allocated_gpu_hours" must be a number, got the number Infinity',
      ]);
    });

    it('checks ids, instance types and namespaces against their patterns, quoting the bad value', () => {
      const text = TWO_OF_EACH.replace('pool_id: h100', 'pool_id: -h100')
        .replace('[p4d.24xlarge]', '["p4d 24xlarge"]')
        .replace('initiative_id: vision', 'initiative_id: "vision team"')
        .replace('[llm-train]', '[LLM_Train]');
      expect(problemsOf(text)).to.deep.equal([
        '"pools[0].pool_id" must be letters, digits, ".", "_" or "-" (at most 63, starting with a letter or digit), got "-h100"',
        '"pools[1].instance_types[0]" must be a Kubernetes label value: letters, digits, "-", "_" or "." (at most 63, starting and ending with a letter or digit), got "p4d 24xlarge"',
        '"initiatives[0].namespaces[0]" must be a Kubernetes namespace name: lowercase letters, digits and "-" (at most 63, starting and ending with a letter or digit), got "LLM_Train"',
        '"initiatives[1].initiative_id" must be a Kubernetes label value: letters, digits, "-", "_" or "." (at most 63, starting and ending with a letter or digit), got "vision team"',
      ]);
    });

    it('refuses an empty or over-long organization_id and an empty instance type list', () => {
      expect(problemsOf(`organization_id: ""\nallocated_gpu_hours: 1\n`)).to.deep.equal(['"organization_id" must not be empty']);
      const long = 'o'.repeat(129);
      expect(problemsOf(`organization_id: ${long}\nallocated_gpu_hours: 1\n`)).to.deep.equal([
        `"organization_id" must be at most 128 characters, got 129: "${'o'.repeat(80)}…"`,
      ]);
      expect(problemsOf(TWO_OF_EACH.replace('[p5.48xlarge]', '[]'))).to.deep.equal(['"pools[0].instance_types" must list at least one item']);
    });

    it('refuses an instance type or namespace listed twice in the same item', () => {
      const text = TWO_OF_EACH.replace('[p5.48xlarge]', '[p5.48xlarge, p5e.48xlarge, p5.48xlarge]').replace('[vision]', '[vision, vision]');
      expect(problemsOf(text)).to.deep.equal([
        '"pools[0].instance_types" lists "p5.48xlarge" twice (items 0 and 2)',
        '"initiatives[1].namespaces" lists "vision" twice (items 0 and 1)',
      ]);
    });

    it('refuses lists and items of the wrong kind', () => {
      expect(problemsOf('organization_id: o\nallocated_gpu_hours: 1\npools: {h100: 1}\ninitiatives: [llm]\n')).to.deep.equal([
        '"pools" must be a list, got a mapping',
        '"initiatives[0]" must be a mapping, got the string "llm"',
      ]);
    });
  });

  describe('problems across items', () => {
    it('refuses a duplicate pool_id and a duplicate initiative_id', () => {
      const text = TWO_OF_EACH.replace('pool_id: a100', 'pool_id: h100').replace('initiative_id: vision', 'initiative_id: llm-research');
      expect(problemsOf(text)).to.deep.equal([
        '"pools[1].pool_id" must be unique: "h100" is already the pool_id of pools[0]',
        '"initiatives[1].initiative_id" must be unique: "llm-research" is already the initiative_id of initiatives[0]',
      ]);
    });

    it('refuses an instance type listed in two pools: a workload\'s instance type maps to one pool', () => {
      const text = TWO_OF_EACH.replace('[p4d.24xlarge]', '[p4d.24xlarge, p5.48xlarge]');
      expect(problemsOf(text)).to.deep.equal([
        '"pools[1].instance_types" lists "p5.48xlarge", already listed by pools[0] ("h100"): an instance type belongs to one pool only',
      ]);
    });

    it('refuses a namespace listed under two initiatives', () => {
      const text = TWO_OF_EACH.replace('[vision]', '[vision, llm-train]');
      expect(problemsOf(text)).to.deep.equal([
        '"initiatives[1].namespaces" lists "llm-train", already listed by initiatives[0] ("llm-research"): a namespace belongs to one initiative only',
      ]);
    });
  });

  describe('several problems at once', () => {
    it('reports every problem of the file in one error, schema and cross-item ones together', () => {
      const text = `organization_id: org-acme
period: weekly
allocated_gpu_hours: "1000"
owner: platform-team
pools:
  - pool_id: h100
    allocated_gpu_hours: -1
    instance_types: [p5.48xlarge]
  - pool_id: h100
    allocated_gpu_hours: 10
    instance_types: [p5.48xlarge]
initiatives:
  - initiative_id: llm-research
    allocated_gpu_hours: 5
    namespaces: [llm-train]
  - initiative_id: vision
    allocated_gpu_hours: 5
    namespaces: [llm-train]
    budget: 3
`;
      const problems = problemsOf(text);
      expect(problems).to.have.members([
        '"owner" is not a known key (allowed: organization_id, period, allocated_gpu_hours, allocated_cost, pools, initiatives)',
        '"period" must be one of month, quarter, year, total, got "weekly"',
        '"allocated_gpu_hours" must be a number, got the string "1000"',
        '"pools[0].allocated_gpu_hours" must not be negative, got -1',
        '"initiatives[1].budget" is not a known key (allowed: initiative_id, name, allocated_gpu_hours, allocated_cost, namespaces)',
        '"pools[1].pool_id" must be unique: "h100" is already the pool_id of pools[0]',
        '"pools[1].instance_types" lists "p5.48xlarge", already listed by pools[0] ("h100"): an instance type belongs to one pool only',
        '"initiatives[1].namespaces" lists "llm-train", already listed by initiatives[0] ("llm-research"): a namespace belongs to one initiative only',
      ]);
      expect(problems).to.have.length(8);
    });

    it('caps a flood of problems at 50, saying how many more there are', () => {
      const pools = Array.from({ length: 60 }, (_, i) => `  - {pool_id: p${i}, allocated_gpu_hours: -1, instance_types: [t${i}]}`).join('\n');
      const problems = problemsOf(`organization_id: o\nallocated_gpu_hours: 1\npools:\n${pools}\n`);
      expect(problems).to.have.length(51);
      expect(problems[50]).to.equal('and 10 more problems');
    });
  });

  describe('the text itself', () => {
    it('reports YAML syntax errors with their line and column', () => {
      expect(problemsOf('organization_id: org-acme\nallocated_gpu_hours: [1\n')).to.deep.equal([
        'YAML syntax error at line 3, column 1: flow sequence in block collection must be sufficiently indented and end with a ]',
      ]);
      expect(problemsOf('organization_id: a\norganization_id: b\nallocated_gpu_hours: 1\n')).to.deep.equal([
        'YAML syntax error at line 2, column 1: map keys must be unique',
      ]);
      expect(problemsOf('organization_id: a\nallocated_gpu_hours: 1\n---\norganization_id: b\n')).to.deep.equal([
        'YAML syntax error at line 3, column 1: the file holds more than one YAML document',
      ]);
    });

    it('refuses an empty file, a file of comments only and a file that is not a mapping', () => {
      const empty = 'the file is empty: it must hold a mapping with at least organization_id and allocated_gpu_hours';
      expect(problemsOf('')).to.deep.equal([empty]);
      expect(problemsOf('# budgets come later\n')).to.deep.equal([empty]);
      expect(problemsOf('- organization_id: o\n')).to.deep.equal(['the file must hold a mapping (organization_id: …), got a list']);
      expect(problemsOf('org-acme\n')).to.deep.equal(['the file must hold a mapping (organization_id: …), got the string "org-acme"']);
    });

    it('refuses a "billion laughs" file quickly, without expanding it', () => {
      const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
      for (let level = 1; level < 10; level += 1) {
        const name = String.fromCharCode(97 + level);
        const previous = String.fromCharCode(96 + level);
        levels.push(`${name}: &${name} [${Array.from({ length: 9 }, () => `*${previous}`).join(',')}]`);
      }
      const started = performance.now();
      const problems = problemsOf(`${levels.join('\n')}\n`);
      expect(performance.now() - started).to.be.below(1000);
      expect(problems).to.deep.equal([
        'YAML aliases expand too much (more than 100 alias uses, weighed by size): refused as a resource exhaustion attempt',
      ]);
    });

    it('refuses a file over 1 MiB before parsing it', () => {
      const padding = `# ${'x'.repeat(MAX_CAPACITY_FILE_BYTES)}\n`;
      const text = `organization_id: o\nallocated_gpu_hours: 1\n${padding}`;
      expect(problemsOf(text)).to.deep.equal([`the file is at least ${text.length} bytes, over the 1 MiB (1048576 bytes) a ConfigMap may hold`]);
      // Counted in UTF-8 bytes, not characters: 600 Ki two-byte characters are 1.2 MB.
      const wide = `organization_id: o\nallocated_gpu_hours: 1\n# ${'é'.repeat(600 * 1024)}\n`;
      expect(problemsOf(wide)[0]).to.equal(`the file is ${Buffer.byteLength(wide)} bytes, over the 1 MiB (1048576 bytes) a ConfigMap may hold`);
    });

    it('refuses deeply nested collections with a syntax error instead of crashing', () => {
      const depth = 20000;
      const problems = problemsOf(`organization_id: o\nallocated_gpu_hours: 1\nx: ${'['.repeat(depth)}${']'.repeat(depth)}\n`);
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/^YAML syntax error at line 3, column \d+: collections are nested too deeply$/);
    });
  });

  describe('docs/capacity.schema.json', () => {
    const published = JSON.parse(readFileSync(CAPACITY_SCHEMA_PATH, 'utf8')) as Record<string, unknown>;

    it('is what `npm run docs:capacity-schema` generates from the schema', () => {
      const committed = readFileSync(CAPACITY_SCHEMA_PATH, 'utf8');
      expect(committed, 'docs/capacity.schema.json is out of date: run npm run docs:capacity-schema').to.equal(renderCapacitySchema());
    });

    it('is a draft 2020-12 schema with its id, title and description', () => {
      expect(published).to.include({ $schema: 'https://json-schema.org/draft/2020-12/schema', $id: CAPACITY_SCHEMA_ID });
      expect(published.$id).to.equal('https://gpucap.io/schemas/capacity.schema.json');
      expect(published.title).to.be.a('string').and.not.empty;
      expect(published.description).to.be.a('string').and.not.empty;
    });

    it('describes every property', () => {
      const undocumented: string[] = [];
      const visit = (schema: Record<string, unknown>, path: string): void => {
        const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
        for (const [key, property] of Object.entries(properties)) {
          if (typeof property.description !== 'string' || property.description === '') undocumented.push(`${path}${key}`);
          visit(property, `${path}${key}.`);
          const items = property.items as Record<string, unknown> | undefined;
          if (items) visit(items, `${path}${key}[].`);
        }
      };
      visit(published, '');
      expect(undocumented).to.deep.equal([]);
    });

    it('validates the DESIGN example with a fresh draft 2020-12 ajv, and refuses what the parser refuses by schema', () => {
      const validate = new Ajv2020({ strict: true, allErrors: true }).compile(published);
      expect(validate(parseYaml(DESIGN_EXAMPLE)), JSON.stringify(validate.errors)).to.equal(true);
      expect(validate(parseYaml('organization_id: o\nallocated_gpu_hours: "100"\n'))).to.equal(false);
      expect(validate(parseYaml('organization_id: o\nallocated_gpu_hours: 1\nperiods: month\n'))).to.equal(false);
      expect(validate(parseYaml('organization_id: o\nallocated_gpu_hours: 1\npools: [{pool_id: h100, allocated_gpu_hours: 1, instance_types: []}]\n'))).to.equal(false);
    });
  });
});
