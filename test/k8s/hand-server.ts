// An API server driven by hand, on loopback: each test says how to answer, and reads what was asked
// (the URLs and the bearer tokens). kubeConfig points at it with the token `secret-token`.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface HandServer {
  kubeConfig: KubeConfig;
  requests: URL[];
  credentials: (string | undefined)[];
  /** How the next requests are answered. */
  respond: (res: ServerResponse, url: URL) => void | Promise<void>;
  close(): Promise<void>;
}

export async function startHandServer(): Promise<HandServer> {
  const hand: HandServer = {
    kubeConfig: new KubeConfig(),
    requests: [],
    credentials: [],
    respond: (res) => void res.writeHead(500).end(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    hand.requests.push(url);
    hand.credentials.push(req.headers.authorization);
    void hand.respond(res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  hand.kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return hand;
}
