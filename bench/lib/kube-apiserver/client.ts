// A plain HTTPS client for a kube-apiserver, built from a kubeconfig with a bearer token and an inline
// CA (what envtest writes): one keep-alive agent shared by every request, so that loading 100k objects
// does not pay a TLS handshake each (test/support's AdminClient makes a fresh agent per request, which
// is right for tests and far too slow here).
import { Agent, request } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

export type PatchType = 'application/json' | 'application/merge-patch+json';

export interface KubeReply {
  status: number;
  text: string;
}

export class ApiServerClient {
  readonly server: URL;
  /** Authorization and Accept, for a caller that builds its own requests (the sequential timer). */
  readonly headers: Record<string, string>;
  readonly ca: string;
  private readonly agent: Agent;

  constructor(kubeconfigPath: string, options: { maxSockets: number }) {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(kubeconfigPath);
    const cluster = kubeConfig.getCurrentCluster();
    const token = kubeConfig.getCurrentUser()?.token;
    if (cluster === null || cluster.caData === undefined || token === undefined) {
      throw new Error(`Cannot use kubeconfig "${kubeconfigPath}": it needs a current cluster with certificate-authority-data and a user with a token`);
    }
    this.server = new URL(cluster.server);
    this.ca = Buffer.from(cluster.caData, 'base64').toString('utf8');
    this.headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    this.agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets, ca: this.ca });
  }

  /** One request; resolves with any status and the whole body as text. */
  send(method: string, path: string, body?: unknown, contentType: PatchType = 'application/json'): Promise<KubeReply> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string | number> = { ...this.headers };
    if (payload !== undefined) Object.assign(headers, { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) });
    return new Promise((resolve, reject) => {
      const req = request({ hostname: this.server.hostname, port: this.server.port, path, method, headers, agent: this.agent, timeout: 120_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} got no answer in 120 s`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** One request that must answer 2xx; its JSON body. */
  async call<T>(method: string, path: string, body?: unknown, contentType: PatchType = 'application/json'): Promise<T> {
    const reply = await this.send(method, path, body, contentType);
    if (reply.status < 200 || reply.status > 299) {
      let message = reply.text.slice(0, 300);
      try {
        message = (JSON.parse(reply.text) as { message?: string }).message ?? message;
      } catch {
        // Not JSON: the text itself says it.
      }
      throw new Error(`${method} ${path} answered ${reply.status}: ${message}`);
    }
    return JSON.parse(reply.text) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}
