// The real container tools for the image and cluster tests: podman on the project's own image storage
// (scripts/image/podman.sh), and the image that scripts/image/build.sh builds from deploy/Dockerfile.
// Without root or podman the suites skip on a developer machine, saying what to run, and fail under
// CI, where .ci/run installs the tools and builds the image first.
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const REPO_DIR = fileURLToPath(new URL('../..', import.meta.url));
const PODMAN = fileURLToPath(new URL('../../scripts/image/podman.sh', import.meta.url));
const BUILD = fileURLToPath(new URL('../../scripts/image/build.sh', import.meta.url));
export const IMAGE_HINT = 'sudo bash scripts/image/build.sh (Debian\'s buildah and podman, about 10 minutes the first time), then set GPUCAP_IMAGE to the name it prints';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command; resolves with its exit code and output whatever the code. */
export async function runCommand(command: string, args: string[], options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<CommandResult> {
  try {
    const { stdout, stderr } = await run(command, args, { maxBuffer: 64 * 1024 * 1024, timeout: options.timeoutMs ?? 120_000, env: options.env ?? process.env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string; message: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr || failed.message };
  }
}

/** podman with the project's storage and runtime settings. */
export function podman(args: string[], options: { timeoutMs?: number } = {}): Promise<CommandResult> {
  return runCommand('bash', [PODMAN, ...args], options);
}

/** podman that must succeed: its stdout, trimmed. */
export async function podmanOk(args: string[], options: { timeoutMs?: number } = {}): Promise<string> {
  const result = await podman(args, options);
  if (result.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${result.code}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** Why the container tools cannot run here, or undefined when they can. */
export function containerToolsProblem(): string | undefined {
  if (process.getuid?.() !== 0) return 'they need root (containers, a kubelet, a bridge)';
  try {
    execFileSync('podman', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'podman is not installed';
  }
  return undefined;
}

/**
 * Skips the suite on a developer machine without the tools, saying how to get them; fails under CI,
 * which must run it.
 */
export function requireContainerTools(context: Mocha.Context, what: string, hint: string): void {
  const problem = containerToolsProblem();
  if (problem === undefined) return;
  if (process.env.CI) throw new Error(`Cannot run ${what}: ${problem}, and CI must run them (${hint})`);
  console.log(`      skipped: ${what} cannot run here (${problem}); ${hint}`);
  context.skip();
}

/** The service image: $GPUCAP_IMAGE, else what scripts/image/build.sh builds (cached layers make a rebuild quick). */
export async function serviceImage(): Promise<string> {
  const named = process.env.GPUCAP_IMAGE;
  if (named !== undefined && named !== '') return named;
  const result = await runCommand('bash', [BUILD], { timeoutMs: 30 * 60_000 });
  if (result.code !== 0) throw new Error(`scripts/image/build.sh failed (${result.code}): ${result.stderr.split('\n').slice(-15).join('\n')}`);
  process.env.GPUCAP_IMAGE = result.stdout.trim().split('\n').pop() ?? '';
  return process.env.GPUCAP_IMAGE;
}
