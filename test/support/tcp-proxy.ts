// A user-space TCP proxy on loopback between one replica and PostgreSQL, for the partition test
// (issue 16 plan §4.6). Modes, switchable at any time:
// - pass: bytes flow both ways;
// - blackhole: nothing flows and nothing is read, but both sockets stay open: no FIN, no RST, and this
//   process's kernel still answers TCP keepalives on both legs, as a network that drops every packet
//   between two live hosts would look to an application that relied on keepalives alone. A connection
//   opened meanwhile is accepted and held, unanswered. Back to pass, what was held flows on, as
//   retransmissions would after a partition heals;
// - reset: every connection, open or new, ends with a RST.
import net from 'node:net';

export type ProxyMode = 'pass' | 'blackhole' | 'reset';

export interface TcpProxy {
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  urlThrough(url: string): string;
  mode(): ProxyMode;
  setMode(mode: ProxyMode): void;
  /** Client connections open now. */
  connections(): number;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | null;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: ProxyMode = 'pass';
  const pairs = new Set<Pair>();

  const end = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };
  const reset = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.resetAndDestroy();
    pair.upstream?.resetAndDestroy();
  };
  /** Forwards `from` to `to` while passing, with backpressure; pauses as soon as it is not passing. */
  const forward = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk: Buffer) => {
      // Paused sockets may still emit what they had read: blackhole it until the mode passes again.
      if (!to.write(chunk) || mode !== 'pass') from.pause();
    });
    to.on('drain', () => {
      if (mode === 'pass') from.resume();
    });
  };
  const connectUpstream = (pair: Pair) => {
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.setNoDelay(true);
    forward(pair.client, upstream);
    forward(upstream, pair.client);
    // Ends travel through while passing: a backend that exits closes the replica's connection too.
    upstream.on('end', () => pair.client.end());
    pair.client.on('end', () => upstream.end());
    upstream.on('close', () => end(pair));
    upstream.on('error', () => end(pair));
    pair.client.resume();
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    const pair: Pair = { client, upstream: null };
    client.setNoDelay(true);
    client.on('error', () => end(pair));
    client.on('close', () => end(pair));
    pairs.add(pair);
    if (mode === 'reset') return reset(pair);
    if (mode === 'pass') connectUpstream(pair);
    // blackhole: held, paused, until the mode changes.
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    urlThrough: (url) => {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    mode: () => mode,
    setMode: (next) => {
      mode = next;
      for (const pair of [...pairs]) {
        if (next === 'reset') reset(pair);
        else if (next === 'blackhole') {
          pair.client.pause();
          pair.upstream?.pause();
        } else if (pair.upstream === null) connectUpstream(pair);
        else {
          pair.client.resume();
          pair.upstream.resume();
        }
      }
    },
    connections: () => pairs.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of [...pairs]) end(pair);
        server.close(() => resolve());
      }),
  };
}
