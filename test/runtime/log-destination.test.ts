// The service's stdout log destination, in a child process whose one libuv pool thread is kept busy:
// pino's own exit flush then wrote "line 1" to "line 4" before "line 0", whose write was still waiting
// for the pool. end() writes every line out in order, then the lines logged while it did so.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const CHILD = `
import { pbkdf2 } from 'node:crypto';
import { StdoutLogDestination } from './src/runtime/log-destination.ts';
import { createLogger } from './src/runtime/logger.ts';
// No time limit in reach, however slow the machine: this is about the order, not the limit.
const destination = new StdoutLogDestination({ endTimeoutMs: 600000 });
const logger = createLogger({ level: 'info', version: 'test' }, destination);
// The only pool thread is busy for a while: the first line's write waits for it.
pbkdf2('password', 'salt', 500000, 64, 'sha512', () => {});
for (let i = 0; i < 5; i += 1) logger.info('line ' + i);
const ended = destination.end();
logger.info('logged while ending');
await ended;
logger.info('logged after the end');
process.exit(0);
`;

function runChild(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { cwd: ROOT, env: { ...process.env, UV_THREADPOOL_SIZE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('StdoutLogDestination', function () {
  this.timeout(60_000);

  it('writes every line, in the order logged, before the process exits', async () => {
    const run = await runChild();
    expect(run.code, run.stderr).to.equal(0);
    const messages = run.stdout.split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).to.deep.equal(['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'logged while ending', 'logged after the end']);
  });
});
