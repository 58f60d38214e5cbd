// Starts an HTTP server on "host:port" and stops it gracefully: stop accepting, let in-flight
// requests finish within the grace period, then cut what is left.
import { createServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listener {
  /** The bound address, e.g. `127.0.0.1:8080` (the real port when 0 was asked). */
  address: string;
  server: Server;
  close(graceMs: number): Promise<void>;
}

export function splitHostPort(text: string): { host: string; port: number } {
  const at = text.lastIndexOf(':');
  return { host: text.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(text.slice(at + 1)) };
}

export async function listen(handler: RequestListener, hostPort: string): Promise<Listener> {
  // Responses still running when the drain starts must end with `Connection: close`; otherwise their
  // keep-alive sockets idle until the grace period runs out and every shutdown lasts the full grace.
  const open = new Set<ServerResponse>();
  let draining = false;
  const server = createServer((req, res) => {
    open.add(res);
    res.once('close', () => open.delete(res));
    if (draining) res.shouldKeepAlive = false;
    handler(req, res);
  });
  // Slowloris guard: a client must send its headers promptly; requests here are small GETs.
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 65_000; // above common load balancer idle timeouts (60 s)
  const { host, port } = splitHostPort(hostPort);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const address = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  return {
    address,
    server,
    close(graceMs) {
      draining = true;
      for (const res of open) if (!res.headersSent) res.shouldKeepAlive = false;
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
