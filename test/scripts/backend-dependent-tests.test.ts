// The PostgreSQL pass (npm run test:postgres) runs the test files that can see the backend switch:
// those whose imports reach test/support/backend.ts. A file left out wrongly would never run on
// PostgreSQL; one let in wrongly only costs time.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { backendDependentTests } from '../../scripts/backend-dependent-tests.mjs';
import { makeTempDir } from '../support/temp-dir.js';

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('scripts/backend-dependent-tests.mjs', () => {
  it('follows imports through test modules, dynamic imports, re-exports and cycles, and nothing else', () => {
    const dir = makeTempDir('gpucap-backend-tests-');
    after(() => dir.remove());
    const root = dir.path;
    write(root, 'test/support/backend.ts', 'export const TEST_BACKEND = "sqlite";\n');
    write(root, 'test/support/harness.ts', "import { other } from './other.js';\nexport { TEST_BACKEND } from './backend.js';\nexport const h = other;\n");
    write(root, 'test/support/other.ts', "import { h } from './harness.js';\nexport const other = 1; export const again = h;\n");
    write(root, 'test/support/pure.ts', "import { readFileSync } from 'node:fs';\nexport const pure = readFileSync;\n");
    write(root, 'test/api/direct.test.ts', "import { TEST_BACKEND } from '../support/backend.js';\nvoid TEST_BACKEND;\n");
    write(root, 'test/api/through-harness.test.ts', "import { h } from '../support/harness.js';\nvoid h;\n");
    write(root, 'test/api/through-cycle.test.ts', "import { other } from '../support/other.js';\nvoid other;\n");
    write(root, 'test/api/dynamic.test.ts', "it('x', async () => { await import('../support/harness.js'); });\n");
    write(root, 'test/parsers/pure.test.ts', "import { pure } from '../support/pure.js';\nimport { expect } from 'chai';\nvoid pure; void expect;\n");
    write(root, 'test/parsers/mentions-only.test.ts', "// test/support/backend.ts is not imported here\nconst name = '../support/backend.js';\nvoid name;\n");
    expect(backendDependentTests(root)).to.deep.equal(['test/api/direct.test.ts', 'test/api/dynamic.test.ts', 'test/api/through-cycle.test.ts', 'test/api/through-harness.test.ts']);
  });

  it('gives the PostgreSQL pass the service and store suites, and not the backend-blind or PostgreSQL-only ones', async () => {
    // The pass's own mocha config, as `npm run test:postgres` loads it.
    const config = (await import(new URL('../../.mocharc.postgres.mjs', import.meta.url).href)) as { default: { spec: string[] } };
    const spec = config.default.spec;
    expect(spec).to.include.members(['test/api/contract.test.ts', 'test/store/writes/rows-with-pods.test.ts', 'test/api/workload-queue.test.ts']);
    expect(spec).to.not.include.members(['test/telemetry/rings/gpu-rings.test.ts', 'test/chart/chart.test.ts', 'test/scripts/backend-dependent-tests.test.ts']);
    expect(spec.filter((file) => file.startsWith('test/ha/') || file.startsWith('test/store/postgres/'))).to.deep.equal([]);
  });
});
