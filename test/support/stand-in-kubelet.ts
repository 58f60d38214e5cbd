// The kubelet's port-forward endpoint and nothing else, for envtest, which has no kubelet: the real
// kube-apiserver proxies `pods/{name}/portforward` to https://<node address>:<kubelet port>/
// portForward/{ns}/{pod}?port=N, and this answers it as the kubelet 1.20 does
// (pkg/kubelet/cri/streaming/portforward/websocket.go): WebSocket subprotocol v4.channel.k8s.io,
// for port i data on channel 2i and errors on 2i+1, each channel opened with the port as uint16
// little-endian, then bytes to and from the pod's port, here a local TCP address per pod and port.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { WebSocketServer } from 'ws';

export interface StandInKubelet {
  port: number;
  /** `namespace/pod` and its port → the local address its bytes go to. */
  route(pod: string, port: number, target: { host: string; port: number }): void;
  /** Paths the API server asked for, in order. */
  requests: string[];
  close(): Promise<void>;
}

const PROTOCOL = 'v4.channel.k8s.io';

export async function startStandInKubelet(dir: string): Promise<StandInKubelet> {
  // A self-signed certificate: the API server checks none unless --kubelet-certificate-authority is set.
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=stand-in-kubelet', '-days', '1',
    '-keyout', join(dir, 'kubelet.key'), '-out', join(dir, 'kubelet.crt')]);
  const routes = new Map<string, { host: string; port: number }>();
  const requests: string[] = [];
  const server: Server = createServer({ key: readFileSync(join(dir, 'kubelet.key')), cert: readFileSync(join(dir, 'kubelet.crt')) }, (_req, res) => {
    res.writeHead(404).end();
  });
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false) });
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    requests.push(`${url.pathname}${url.search}`);
    const path = /^\/portForward\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (path === null) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    const ports = url.searchParams.getAll('port').flatMap((p) => p.split(',')).map(Number);
    wss.handleUpgrade(req, socket, head, (ws) => {
      const send = (channel: number, data: Buffer) => ws.send(Buffer.concat([Buffer.from([channel]), data]));
      const connections = ports.map((port, i) => {
        const prefix = Buffer.alloc(2);
        prefix.writeUInt16LE(port);
        send(2 * i, prefix);
        send(2 * i + 1, prefix);
        const target = routes.get(`${path[1]}/${path[2]}:${port}`);
        if (target === undefined) {
          send(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${path[2]}: no such port`));
          ws.close();
          return undefined;
        }
        const connection = connect(target.port, target.host);
        connection.on('data', (data: Buffer) => send(2 * i, data));
        connection.on('end', () => ws.close());
        connection.on('error', (error) => {
          send(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${path[2]}: ${error.message}`));
          ws.close();
        });
        return connection;
      });
      ws.on('message', (data: Buffer) => {
        const channel = data[0] ?? 0;
        if (channel % 2 === 0) connections[channel / 2]?.write(data.subarray(1));
      });
      ws.on('close', () => connections.forEach((c) => c?.end()));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    route: (pod, port, target) => routes.set(`${pod}:${port}`, target),
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
