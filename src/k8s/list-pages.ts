// Paginated LIST over plain node:http(s) (kube-get.ts). client-node's typed APIs need one method per
// kind and its generic KubernetesObjectApi discovers resources first; a raw GET on the resource path
// handles every path, `limit` and `continue` uniformly, and takes an AbortSignal for stop() and timeouts.
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConnection, kubeGet } from './kube-get.js';
import { KubeRequestError, type ReflectedObject } from './kube-object.js';

export interface ListOptions {
  path: string;
  labelSelector?: string;
  pageSize: number;
  /** Aborts the page in flight (stop(), or a timeout the caller arms). */
  signal: AbortSignal;
  /** Called after each page so the caller can feed its watchdog. */
  onPage?: (count: number) => void;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

interface ListBody<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

export async function listAll<T extends ReflectedObject>(kubeConfig: KubeConfig, options: ListOptions): Promise<ListResult<T>> {
  const what = `Cannot list "${options.path}"`;
  const connection = await kubeConnection(kubeConfig, what);
  try {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    do {
      const url = new URL(connection.server + options.path);
      url.searchParams.set('limit', String(options.pageSize));
      if (options.labelSelector !== undefined) url.searchParams.set('labelSelector', options.labelSelector);
      if (token !== undefined) url.searchParams.set('continue', token);
      const body = await getJson<ListBody<T>>(connection, url, { what, signal: options.signal });
      // Later chunks are served at the first chunk's revision, so the first one's version stands for all.
      resourceVersion ??= body.metadata?.resourceVersion;
      const page = body.items ?? [];
      for (const item of page) items.push(item);
      options.onPage?.(page.length);
      token = body.metadata?.continue || undefined;
    } while (token !== undefined);
    if (resourceVersion === undefined) throw new KubeRequestError('KUBE_BAD_RESPONSE', `${what}: the response has no resourceVersion`);
    return { items, resourceVersion };
  } finally {
    connection.close();
  }
}

async function getJson<T>(connection: Parameters<typeof kubeGet>[0], url: URL, options: Parameters<typeof kubeGet>[2]): Promise<T> {
  const res = await kubeGet(connection, url, options);
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as T;
  } catch {
    throw new KubeRequestError('KUBE_BAD_RESPONSE', `${options.what}: HTTP 200 with a body that is not JSON`);
  }
}
