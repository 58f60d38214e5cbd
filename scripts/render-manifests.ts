// Renders the Helm chart's defaults (release and namespace "gpu-capacity-api") into one plain manifest
// file, deploy/manifests/gpu-capacity-api.yaml, for clusters installed without Helm.
//   npm run manifests            rewrite deploy/manifests/gpu-capacity-api.yaml
//   npm run manifests -- --check exit 1 when the file differs from a fresh render
// helm: $HELM_BIN, else scripts/get-helm.sh (cached). test/chart/manifests.test.ts fails
// when the committed file and a fresh render differ.
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const CHART_DIR = fileURLToPath(new URL('../charts/gpu-capacity-api', import.meta.url));
export const MANIFESTS_PATH = fileURLToPath(new URL('../deploy/manifests/gpu-capacity-api.yaml', import.meta.url));
const GET_HELM = fileURLToPath(new URL('./get-helm.sh', import.meta.url));
export const RELEASE = 'gpu-capacity-api';
export const NAMESPACE = 'gpu-capacity-api';

const HEADER = `# Generated from charts/gpu-capacity-api with its default values (release and namespace
# "${NAMESPACE}") by \`npm run manifests\` (scripts/render-manifests.ts); do not edit by hand: a test
# fails when this file differs from a fresh render. Install:
#   kubectl create namespace ${NAMESPACE}
#   kubectl apply -n ${NAMESPACE} -f deploy/manifests/gpu-capacity-api.yaml
# The Secret ${RELEASE}-api-tokens holds no token records: replace it with your own records file
# (docs/authentication.md, "Deploying the file"), or every API request is rejected with 401.
`;

/** The helm binary: $HELM_BIN, else the one scripts/get-helm.sh fetches and caches. */
export function helmBinary(): string {
  const fromEnv = process.env.HELM_BIN;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return execFileSync('bash', [GET_HELM], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The manifest file's content: the header, then `helm template` of the chart's defaults. */
export function renderManifests(helm = helmBinary()): string {
  const rendered = execFileSync(helm, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return HEADER + rendered;
}

function main(args: string[]): void {
  const content = renderManifests();
  if (args.includes('--check')) {
    const current = readFileSync(MANIFESTS_PATH, 'utf8');
    if (current !== content) {
      console.error(`${MANIFESTS_PATH} is out of date: run \`npm run manifests\``);
      process.exit(1);
    }
    return;
  }
  writeFileSync(MANIFESTS_PATH, content);
  console.log(`wrote ${MANIFESTS_PATH}`);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
if (invokedDirectly) main(process.argv.slice(2));
