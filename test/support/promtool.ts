// promtool, from Debian's prometheus package: $PROMTOOL_BIN, else the one beside the Prometheus
// binary that bench/tools/ensure-prometheus.sh fetches and caches under bench/.cache/prometheus/.
// Without one, a suite fails under CI (.ci/run exports PROMTOOL_BIN) and skips on a developer machine.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const PROMTOOL_INSTALL_HINT = 'export PROMTOOL_BIN=$(dirname "$(bash bench/tools/ensure-prometheus.sh)")/promtool';

let found: Promise<{ path?: string; problem?: string }> | undefined;

function findPromtool(): Promise<{ path?: string; problem?: string }> {
  found ??= (async () => {
    try {
      const path = process.env.PROMTOOL_BIN ?? join(dirname((await run('bash', [join(REPO_ROOT, 'bench', 'tools', 'ensure-prometheus.sh')])).stdout.trim()), 'promtool');
      await run(path, ['--version']);
      return { path };
    } catch (error) {
      return { problem: (error as Error).message.split('\n')[0] };
    }
  })();
  return found;
}

export async function promtoolOrSkip(context: Mocha.Context): Promise<string> {
  const { path, problem } = await findPromtool();
  if (path !== undefined) return path;
  if (process.env.CI) throw new Error(`Cannot run the alert rule tests: promtool is not available (${problem}), and CI must run them (${PROMTOOL_INSTALL_HINT})`);
  console.log(`      skipped: these tests need promtool (${problem}); run \`${PROMTOOL_INSTALL_HINT}\` first`);
  return context.skip();
}

export interface PromtoolResult {
  code: number;
  output: string;
}

/** Runs promtool; resolves with its exit code and output whatever the code. */
export async function promtool(path: string, args: string[], cwd: string): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await run(path, args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: (failed.stdout ?? '') + (failed.stderr ?? String(error)) };
  }
}
