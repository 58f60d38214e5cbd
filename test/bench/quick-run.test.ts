// `npm run bench -- --quick`, the smoke check of the benchmarks that CI runs: every registered benchmark
// runs at its small scale without crashing or failing a request, and writes the results file of each of
// its rows with the machine, the Node version and the commit, and a figure for each target line. It
// asserts nothing about speed: a slow machine passes, a broken benchmark does not.
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { BENCHES } from '../../bench/registry.js';
import { readTargets } from '../../bench/lib/report/targets.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('npm run bench -- --quick', function () {
  this.timeout(20 * 60_000);
  let exitCode: number | null = null;
  let output = '';
  let startedAt = 0;

  before(async () => {
    startedAt = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--quick'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  });

  const tail = () => output.split('\n').slice(-60).join('\n');

  it('runs every benchmark to the end with no crash and no failed request (exit 0)', () => {
    expect(exitCode, tail()).to.equal(0);
    for (const bench of BENCHES) expect(output, `=== ${bench.name} (quick) === missing`).to.include(`=== ${bench.name} (quick) ===`);
  });

  for (const bench of BENCHES) {
    for (const row of bench.rows) {
      it(`${bench.name} writes bench/results/${row}.quick.json in this run, with the machine, Node and commit`, () => {
        const file = join(repoRoot, 'bench', 'results', `${row}.quick.json`);
        expect(statSync(file).mtimeMs, `${file} is older than this run`).to.be.at.least(startedAt - 1000);
        const results = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        expect(results).to.include.keys('machine', 'node', 'gitCommit', 'timestamp', 'parameters');
        expect(results['node']).to.equal(process.version);
      });
    }
  }

  it('gives a figure for every target line of issue 7 it measures', () => {
    const rows = new Set(BENCHES.flatMap((b) => b.rows));
    const lines = readTargets('.quick').filter((line) => rows.has(line.row));
    expect(lines.length).to.be.greaterThan(10);
    for (const line of lines) expect(line.measured, `${line.row}: ${line.measure}`).to.not.equal('n/a');
  });
});
