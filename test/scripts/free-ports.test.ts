// The ports the test scripts start etcd, kube-apiserver and PostgreSQL on: free, distinct, and out of
// the range the kernel gives to outgoing connections, which could take them before the child binds.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePorts } from '../../scripts/free-ports.mjs';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/free-ports.mjs', import.meta.url));

function ephemeralRange(): [number, number] {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  return [low ?? 0, high ?? 0];
}

function listenOn(port: number): Promise<() => Promise<void>> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(() => new Promise((done) => server.close(() => done()))));
  });
}

describe('scripts/free-ports.mjs', function () {
  before(function () {
    if (process.platform !== 'linux') this.skip(); // the ephemeral range is read from Linux's /proc
  });

  it('gives distinct ports below the ephemeral range that a child can then listen on', async function () {
    const ports = await freePorts(20);
    const [low] = ephemeralRange();
    expect(new Set(ports).size).to.equal(20);
    for (const port of ports) expect(port).to.be.within(20_000, low - 1);
    const closers = await Promise.all(ports.map(listenOn));
    await Promise.all(closers.map((close) => close()));
  });

  it('never gives a port that something already listens on', async function () {
    const [low] = ephemeralRange();
    const listened = Array.from({ length: 200 }, (_, i) => 20_000 + i * 7);
    // A port that fails to listen here is taken by something else: taken all the same.
    const closers = await Promise.all(listened.map((port) => listenOn(port).catch(() => undefined)));
    try {
      const ports = await freePorts(50);
      expect(ports.filter((port) => listened.includes(port))).to.deep.equal([]);
      for (const port of ports) expect(port).to.be.below(low);
    } finally {
      for (const close of closers) await close?.();
    }
  });

  it('prints the ports on one line for the shell scripts, and refuses a count that is not a positive integer', async function () {
    const { stdout } = await run(process.execPath, [SCRIPT, '3']);
    expect(stdout).to.match(/^\d+ \d+ \d+\n$/);
    const failure = await run(process.execPath, [SCRIPT, 'three']).then(() => undefined, (error: { code: number; stderr: string }) => error);
    expect(failure?.code).to.equal(2);
    expect(failure?.stderr).to.equal('free-ports.mjs: COUNT must be a positive integer, not "three"\n');
  });
});
