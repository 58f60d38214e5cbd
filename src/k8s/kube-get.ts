// One GET against the API server with the kubeconfig's own TLS, proxy and credentials (client-node's
// applyToHTTPSOptions: certificates, bearer and exec tokens, token files), over plain node:http(s). It
// resolves with the response once a 200 arrives; any other status is read (bounded) and becomes a
// KubeRequestError with the server's message and Retry-After. LIST pages and watch streams share it.
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeRequestError } from './kube-object.js';

/** Most of an error response's body that is read for its message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface KubeGetOptions {
  /** What the request is, for error messages: e.g. `Cannot list "/api/v1/pods"`. */
  what: string;
  signal: AbortSignal;
}

export interface KubeConnection {
  /** The API server's base URL (the current cluster's `server`). */
  server: string;
  requestOptions: RequestOptions;
  /** Closes every socket of this connection (its own agent); requests still open fail. */
  close(): void;
}

/** The kubeconfig's current cluster with a fresh agent of its own, for one LIST or one watch. */
export async function kubeConnection(kubeConfig: KubeConfig, what: string): Promise<KubeConnection> {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new KubeRequestError('KUBE_BAD_RESPONSE', `${what}: the kubeconfig has no current cluster`);
  const requestOptions: RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(requestOptions);
  const agent = requestOptions.agent;
  return {
    server,
    requestOptions,
    close: () => {
      if (typeof agent === 'object') agent.destroy();
    },
  };
}

/** Retry-After in whole seconds (the form the API server sends); an HTTP date or junk is ignored. */
function retryAfterMs(header: string | undefined): number | undefined {
  return header !== undefined && /^\d{1,6}$/.test(header.trim()) ? Number(header.trim()) * 1000 : undefined;
}

/** The response to a GET of `url`, once its status is 200. */
export function kubeGet(connection: KubeConnection, url: URL, options: KubeGetOptions): Promise<IncomingMessage> {
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, { ...connection.requestOptions, method: 'GET', signal: options.signal }, (res) => {
      const status = res.statusCode ?? 0;
      if (status === 200) return resolve(res);
      readError(res, status, options.what).then(reject, reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function readError(res: IncomingMessage, status: number, what: string): Promise<never> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (bytes < MAX_ERROR_BODY_BYTES) chunks.push(chunk);
    bytes += chunk.length;
  }
  let message: unknown;
  try {
    message = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message?: unknown }).message;
  } catch {
    message = undefined;
  }
  const detail = typeof message === 'string' ? ` (${message})` : res.statusMessage ? ` (${res.statusMessage})` : '';
  throw new KubeRequestError('KUBE_HTTP_STATUS', `${what}: HTTP ${status}${detail}`, status, retryAfterMs(res.headers['retry-after']));
}
