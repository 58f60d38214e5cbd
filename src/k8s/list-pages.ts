// Paginated LIST over plain node:http(s) (kube-get.ts). client-node's typed APIs need one method per
// kind and its generic KubernetesObjectApi discovers resources first; a raw GET on the resource path
// handles every path, `limit` and `continue` uniformly, and takes an AbortSignal for stop() and timeouts.
// Each page's body is parsed by the decoder (decode/), on this thread or on a worker of its own.
import type { KubeConfig } from '@kubernetes/client-node';
import type { FieldSelection } from '../domain/field-selection.js';
import type { ListBody, ObjectDecoder } from './decode/decoder.js';
import { INLINE_DECODER } from './decode/inline-decoder.js';
import { kubeConnection, kubeGet } from './kube-get.js';
import { KubeRequestError, type ReflectedObject } from './kube-object.js';

export interface ListOptions<T> {
  path: string;
  labelSelector?: string;
  pageSize: number;
  /** Aborts the page in flight (stop(), or a timeout the caller arms). */
  signal: AbortSignal;
  /** Each page's objects as it arrives (`index` 0 first), so that no caller needs to hold the whole LIST. */
  onPage: (items: T[], index: number) => void;
  /** Where each page is parsed (default: on this thread). */
  decoder?: ObjectDecoder;
  /** The fields of each item that are kept (default: all). */
  fields?: FieldSelection;
}

export interface ListResult {
  /** The first page's version, which stands for the whole LIST. */
  resourceVersion: string;
  items: number;
  pages: number;
}

export async function listPages<T extends ReflectedObject>(kubeConfig: KubeConfig, options: ListOptions<T>): Promise<ListResult> {
  const what = `Cannot list "${options.path}"`;
  const connection = await kubeConnection(kubeConfig, what);
  try {
    let items = 0;
    let pages = 0;
    let resourceVersion: string | undefined;
    let token: string | undefined;
    do {
      const url = new URL(connection.server + options.path);
      url.searchParams.set('limit', String(options.pageSize));
      if (options.labelSelector !== undefined) url.searchParams.set('labelSelector', options.labelSelector);
      if (token !== undefined) url.searchParams.set('continue', token);
      const body = await getPage(connection, url, { what, signal: options.signal }, options);
      // Later chunks are served at the first chunk's revision, so the first one's version stands for all.
      resourceVersion ??= body.resourceVersion;
      if (resourceVersion === undefined) throw new KubeRequestError('KUBE_BAD_RESPONSE', `${what}: the response has no resourceVersion`);
      const page = body.items as T[];
      items += page.length;
      options.onPage(page, pages);
      pages += 1;
      token = body.continue;
    } while (token !== undefined);
    return { resourceVersion, items, pages };
  } finally {
    connection.close();
  }
}

async function getPage(
  connection: Parameters<typeof kubeGet>[0],
  url: URL,
  request: Parameters<typeof kubeGet>[2],
  decoding: Pick<ListOptions<unknown>, 'decoder' | 'fields'>,
): Promise<ListBody> {
  const res = await kubeGet(connection, url, request);
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  const body = await (decoding.decoder ?? INLINE_DECODER).list(Buffer.concat(chunks), decoding.fields);
  if (body === null) throw new KubeRequestError('KUBE_BAD_RESPONSE', `${request.what}: HTTP 200 with a body that is not a JSON object`);
  return body;
}
