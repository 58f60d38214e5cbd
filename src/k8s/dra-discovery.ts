// Which version of Dynamic Resource Allocation's API group the API server serves, from its discovery
// document (GET /apis/resource.k8s.io), never from its version: DRA is GA since Kubernetes 1.34, beta
// before, and a distribution may serve it earlier or not at all. The newest version the service reads
// wins; a server without the group (404) has no DRA, which is no error.
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConnection, kubeGet } from './kube-get.js';
import { KubeRequestError, statusCodeOf } from './kube-object.js';

export const DRA_GROUP = 'resource.k8s.io';

/** The versions whose objects the GPU count reads at the same paths (src/k8s/objects/dra-types.ts), newest first. */
export const DRA_VERSIONS = ['v1', 'v1beta2', 'v1beta1'] as const;
export type DraVersion = (typeof DRA_VERSIONS)[number];

const MAX_DISCOVERY_BYTES = 256 * 1024;

/** The version to watch of those an APIGroup document lists; null when it lists none the service reads. */
export function chooseDraVersion(group: unknown): DraVersion | null {
  const versions = (group as { versions?: unknown } | null)?.versions;
  if (!Array.isArray(versions)) return null;
  const served = new Set(versions.map((entry) => (entry as { version?: unknown } | null)?.version));
  return DRA_VERSIONS.find((version) => served.has(version)) ?? null;
}

/** The DRA version this API server serves; null without the group. Throws when the server cannot tell (retry). */
export async function discoverDraVersion(kubeConfig: KubeConfig, signal: AbortSignal): Promise<DraVersion | null> {
  const what = `Cannot discover "/apis/${DRA_GROUP}"`;
  const connection = await kubeConnection(kubeConfig, what);
  try {
    const url = new URL(`${connection.server}/apis/${DRA_GROUP}`);
    let body: Buffer;
    try {
      const res = await kubeGet(connection, url, { what, signal });
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of res as AsyncIterable<Buffer>) {
        bytes += (chunk as Buffer).length;
        if (bytes > MAX_DISCOVERY_BYTES) {
          throw new KubeRequestError('KUBE_BAD_RESPONSE', `${what}: the discovery document exceeds ${MAX_DISCOVERY_BYTES} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
      body = Buffer.concat(chunks);
    } catch (error) {
      if (statusCodeOf(error) === 404) return null;
      throw error;
    }
    let group: unknown;
    try {
      group = JSON.parse(body.toString('utf8'));
    } catch {
      throw new KubeRequestError('KUBE_BAD_RESPONSE', `${what}: HTTP 200 with a body that is not JSON`);
    }
    return chooseDraVersion(group);
  } finally {
    connection.close();
  }
}
