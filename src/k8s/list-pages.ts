// Paginated LIST over plain node:http(s). client-node's typed APIs need one method per kind and its
// generic KubernetesObjectApi discovers resources first; a raw GET on the resource path with the
// kubeconfig's own TLS, proxy and auth (applyToHTTPSOptions, incl. exec and token plugins) handles
// every path, `limit` and `continue` uniformly, and takes an AbortSignal for stop() and timeouts.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
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
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new KubeRequestError('KUBE_BAD_RESPONSE', 'Cannot list: the kubeconfig has no current cluster');
  const requestOptions: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(requestOptions);
  const agent = requestOptions.agent;
  try {
    const items: T[] = [];
    let resourceVersion: string | undefined;
    let token: string | undefined;
    do {
      const url = new URL(server + options.path);
      url.searchParams.set('limit', String(options.pageSize));
      if (options.labelSelector !== undefined) url.searchParams.set('labelSelector', options.labelSelector);
      if (token !== undefined) url.searchParams.set('continue', token);
      const body = await getJson<ListBody<T>>(url, { ...requestOptions, method: 'GET', signal: options.signal });
      // Later chunks are served at the first chunk's revision, so the first one's version stands for all.
      resourceVersion ??= body.metadata?.resourceVersion;
      const page = body.items ?? [];
      for (const item of page) items.push(item);
      options.onPage?.(page.length);
      token = body.metadata?.continue || undefined;
    } while (token !== undefined);
    if (resourceVersion === undefined) throw new KubeRequestError('KUBE_BAD_RESPONSE', `Cannot list "${options.path}": the response has no resourceVersion`);
    return { items, resourceVersion };
  } finally {
    // A fresh agent per LIST (applyToHTTPSOptions makes one): destroying it closes any idle socket.
    if (typeof agent === 'object') agent.destroy();
  }
}

/** Retry-After in whole seconds (the form the API server sends); an HTTP date or junk is ignored. */
function retryAfterMs(header: string | undefined): number | undefined {
  return header !== undefined && /^\d{1,6}$/.test(header.trim()) ? Number(header.trim()) * 1000 : undefined;
}

function getJson<T>(url: URL, options: RequestOptions): Promise<T> {
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise<T>((resolve, reject) => {
    const req = send(url, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          return reject(new KubeRequestError(status === 200 ? 'KUBE_BAD_RESPONSE' : 'KUBE_HTTP_STATUS', `Cannot list "${url.pathname}": HTTP ${status} with a body that is not JSON`, status === 200 ? undefined : status));
        }
        if (status !== 200) {
          const message = (parsed as { message?: unknown }).message;
          const detail = typeof message === 'string' ? ` (${message})` : '';
          return reject(new KubeRequestError('KUBE_HTTP_STATUS', `Cannot list "${url.pathname}": HTTP ${status}${detail}`, status, retryAfterMs(res.headers['retry-after'])));
        }
        resolve(parsed as T);
      });
    });
    req.on('error', reject);
    req.end();
  });
}
