// The legs of the suite (scripts/test-legs.mjs) come from what each test file imports. No test may be
// lost between them: every file runs in a leg CI runs, and on Node 20 in exactly one of unit and e2e.
// A file put in e2e wrongly only runs in the slower leg; one put in unit wrongly would hide a slow test
// among the fast ones; one left out of node24 wrongly would run on the image's runtime only as far as
// the image and cluster legs reach.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { checkedLegs, SEPARATE_LEGS, testLegs } from '../../scripts/test-legs.mjs';
import { makeTempDir } from '../support/temp-dir.js';

function write(root: string, path: string, text: string): void {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
}

describe('scripts/test-legs.mjs', () => {
  it('makes a file end-to-end by what it starts, through test modules, and nothing else', () => {
    const dir = makeTempDir('gpucap-test-legs-');
    after(() => dir.remove());
    const root = dir.path;
    write(root, 'src/service/start-service.ts', "export async function startService() {}\n");
    write(root, 'src/spawns.ts', "import { spawn } from 'node:child_process';\nexport const s = spawn;\n");
    write(root, 'test/support/runner.ts', "import { execFile } from 'node:child_process';\nexport const run = execFile;\n");
    write(root, 'test/support/harness.ts', "export { startService } from '../../src/service/start-service.js';\n");
    write(root, 'test/support/postgres.ts', "import { execFile } from 'node:child_process';\nexport const HINT = 'x'; export const start = execFile;\n");
    write(root, 'test/support/postgres-database.ts', "import { start } from './postgres.js';\nexport const freshDatabase = start;\n");
    write(root, 'test/support/backend.ts', "import { freshDatabase } from './postgres-database.js';\nimport { HINT } from './postgres.js';\nexport const TEST_BACKEND = 'sqlite'; void freshDatabase; void HINT;\n");
    write(root, 'test/support/test-index.ts', "import { TEST_BACKEND } from './backend.js';\nimport { freshDatabase } from './postgres-database.js';\nexport const open = () => (TEST_BACKEND === 'sqlite' ? null : freshDatabase);\n");
    write(root, 'test/api/service.test.ts', "import { startService } from '../support/harness.js';\nvoid startService;\n");
    write(root, 'test/cli/runs-a-child.test.ts', "import { run } from '../support/runner.js';\nvoid run;\n");
    write(root, 'test/cli/dynamic.test.ts', "it('x', async () => { await import('../support/runner.js'); });\n");
    write(root, 'test/console/browser.test.ts', "import { chromium } from 'playwright-core';\nvoid chromium;\n");
    write(root, 'test/store/own-postgres.test.ts', "import { freshDatabase } from '../support/postgres-database.js';\nvoid freshDatabase;\n");
    write(root, 'test/store/through-switch.test.ts', "import { open } from '../support/test-index.js';\nvoid open;\n");
    write(root, 'test/store/types-only.test.ts', "import type { run } from '../support/runner.js';\nexport type R = typeof run;\n");
    write(root, 'test/store/src-spawner.test.ts', "import { s } from '../../src/spawns.js';\nvoid s;\n");
    write(root, 'test/image/image.test.ts', "import { run } from '../support/runner.js';\nvoid run;\n");
    write(root, 'test/cluster/chart-install.test.ts', "import { run } from '../support/runner.js';\nvoid run;\n");
    const legs = testLegs(root);
    expect(legs.e2e).to.deep.equal(['test/api/service.test.ts', 'test/cli/dynamic.test.ts', 'test/cli/runs-a-child.test.ts', 'test/console/browser.test.ts', 'test/store/own-postgres.test.ts']);
    expect(legs.unit).to.deep.equal(['test/store/src-spawner.test.ts', 'test/store/through-switch.test.ts', 'test/store/types-only.test.ts']);
    expect(legs.image).to.deep.equal(['test/image/image.test.ts']);
    expect(legs.cluster).to.deep.equal(['test/cluster/chart-install.test.ts']);
  });

  it('runs on Node 24 what reaches the runtime\'s own parts through any module, in the test\'s own process: not what starts Node or Chromium beside it', () => {
    const dir = makeTempDir('gpucap-test-legs-');
    after(() => dir.remove());
    const root = dir.path;
    write(root, 'src/store/database.ts', "import Database from 'better-sqlite3';\nexport const open = Database;\n");
    write(root, 'src/store/index.ts', "import { open } from './database.js';\nexport const index = open;\n");
    write(root, 'src/domain/parse.ts', "export const parse = (text: string) => text.trim();\n");
    write(root, 'src/k8s/types.ts', "import type { V1Pod } from '@kubernetes/client-node';\nexport type Pod = V1Pod;\n");
    write(root, 'test/support/node-child.ts', "import { spawn } from 'node:child_process';\nexport const start = () => spawn(process.execPath, ['x.js']);\n");
    write(root, 'test/support/helm.ts', "import { execFile } from 'node:child_process';\nexport const helm = () => execFile('helm', ['template']);\n");
    write(root, 'test/store/index.test.ts', "import { index } from '../../src/store/index.js';\nvoid index;\n");
    write(root, 'test/domain/parse.test.ts', "import { parse } from '../../src/domain/parse.js';\nvoid parse;\n");
    write(root, 'test/k8s/types.test.ts', "import type { Pod } from '../../src/k8s/types.js';\nexport type P = Pod;\n");
    write(root, 'test/auth/crypto.test.ts', "import { randomBytes } from 'node:crypto';\nvoid randomBytes;\n");
    write(root, 'test/cli/node-child.test.ts', "import { start } from '../support/node-child.js';\nvoid start;\n");
    write(root, 'test/store/replicas.test.ts', "import { index } from '../../src/store/index.js';\nimport { start } from '../support/node-child.js';\nvoid index; void start;\n");
    write(root, 'test/store/with-helm.test.ts', "import { index } from '../../src/store/index.js';\nimport { helm } from '../support/helm.js';\nvoid index; void helm;\n");
    write(root, 'test/console/browser.test.ts', "import { index } from '../../src/store/index.js';\nimport { chromium } from 'playwright-core';\nvoid index; void chromium;\n");
    write(root, 'test/chart/chart.test.ts', "import { helm } from '../support/helm.js';\nvoid helm;\n");
    write(root, 'test/bench/quick-run.test.ts', "import { start } from '../support/node-child.js';\nvoid start;\n");
    const legs = testLegs(root);
    expect(legs.node24).to.deep.equal(['test/auth/crypto.test.ts', 'test/store/index.test.ts', 'test/store/with-helm.test.ts']);
    expect(legs.e2e).to.include.members(['test/chart/chart.test.ts']);
    expect(legs.bench).to.deep.equal(['test/bench/quick-run.test.ts']);
  });

  it('loses no test of this repository: each runs in a leg CI runs, and on Node 20 in one of unit and e2e', () => {
    const { legs, inNoLeg, inUnitAndE2e } = checkedLegs();
    expect(inNoLeg, 'test files no leg runs').to.deep.equal([]);
    expect(inUnitAndE2e, 'test files in both unit and e2e').to.deep.equal([]);
    // npm test runs .mocharc.json: every test file but the folders with legs of their own, that is unit, e2e and bench.
    const mocharc = JSON.parse(readFileSync(new URL('../../.mocharc.json', import.meta.url), 'utf8')) as { spec: string[]; ignore: string[] };
    expect(mocharc.spec).to.deep.equal(['test/**/*.test.ts']);
    expect(mocharc.ignore).to.deep.equal(Object.values(SEPARATE_LEGS).map((folder) => `${folder}/**`));
    expect(legs.node24.filter((file) => !legs.unit.includes(file) && !legs.e2e.includes(file))).to.deep.equal([]);
    expect(legs.bench).to.deep.equal(['test/bench/quick-run.test.ts']);
    expect(legs.e2e).to.not.include('test/bench/quick-run.test.ts');
    expect(legs.node24).to.not.include('test/bench/quick-run.test.ts');
  });

  it('sorts this repository\'s suites as their files say', () => {
    const legs = testLegs();
    expect(legs.e2e).to.include.members(['test/api/contract.test.ts', 'test/ha/writer-kill.test.ts', 'test/e2e/service-envtest.test.ts', 'test/console/browser.test.ts', 'test/store/postgres/writes.test.ts']);
    expect(legs.unit).to.include.members(['test/workloads/mapping/map-pod.test.ts', 'test/store/reads/list.test.ts', 'test/telemetry/rings/gpu-rings.test.ts', 'test/console/screenshots.test.ts']);
    expect(legs.node24).to.include.members(['test/api/contract.test.ts', 'test/store/reads/list.test.ts', 'test/store/sqlite/threads/read-pool.test.ts', 'test/k8s/reflector.test.ts', 'test/auth/authenticator.test.ts']);
    expect(legs.node24).to.not.include.members(['test/workloads/mapping/map-pod.test.ts', 'test/telemetry/rings/gpu-rings.test.ts', 'test/chart/chart.test.ts']);
    // They run Node or Chromium beside the test: on Node 24, the image and cluster legs run the service.
    expect(legs.node24).to.not.include.members(['test/ha/writer-kill.test.ts', 'test/console/browser.test.ts', 'test/service/entry-point.test.ts']);
    expect(legs.node24).to.include.members(['test/e2e/service-envtest.test.ts']);
  });

  it('gives each leg\'s mocha config the leg\'s files', async () => {
    const legs = testLegs();
    for (const leg of ['unit', 'e2e', 'bench', 'node24', 'postgres'] as const) {
      const config = (await import(new URL(`../../.mocharc.${leg}.mjs`, import.meta.url).href)) as { default: { spec: string[] } };
      expect(config.default.spec, leg).to.deep.equal(legs[leg]);
    }
  });
});
