// Ports free right now on 127.0.0.1, for a child process or container to listen on.
//   node scripts/free-ports.mjs [COUNT]   prints COUNT distinct ports on one line, separated by spaces
// It picks them below the kernel's ephemeral range (ip_local_port_range), not with listen(0): a port
// the OS hands out for listen(0) comes from that range, and once released the kernel may give it to
// any outgoing connection before the child binds it (CI saw a kube-apiserver fail to bind that way
// while two suites ran side by side). Below the range only another listener can take it, and every
// candidate is bound and held until all are chosen, so no two of one call are the same.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const LOWEST = 20_000;
const ATTEMPTS = 500;

/** @param {number} count @returns {Promise<number[]>} */
export async function freePorts(count) {
  const below = ephemeralLow();
  const servers = [];
  try {
    const ports = [];
    for (let attempt = 0; ports.length < count; attempt += 1) {
      if (attempt >= ATTEMPTS) throw new Error(`no ${count} free ports on 127.0.0.1 between ${LOWEST} and ${below - 1} after ${ATTEMPTS} tries`);
      const candidate = below > LOWEST ? LOWEST + Math.floor(Math.random() * (below - LOWEST)) : 0;
      const server = createServer();
      const port = await listen(server, candidate);
      if (port === undefined) continue;
      servers.push(server);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(() => resolve(undefined)))));
  }
}

/** The first port of the ephemeral range; 0 where the kernel does not say (then the OS chooses). */
function ephemeralLow() {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) ? low : 0;
  } catch {
    return 0;
  }
}

/** @returns {Promise<number | undefined>} the port bound, or undefined when that one is taken */
function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', (error) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(undefined) : reject(error)));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : undefined);
    });
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = process.argv[2] === undefined ? 1 : Number(process.argv[2]);
  if (!Number.isInteger(count) || count < 1) {
    process.stderr.write(`free-ports.mjs: COUNT must be a positive integer, not "${process.argv[2]}"\n`);
    process.exit(2);
  }
  process.stdout.write(`${(await freePorts(count)).join(' ')}\n`);
}
