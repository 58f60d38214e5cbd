// The fault tests' traffic tools tell where a failed request waited, so they are tested themselves:
// the balancer (its own process, as kube-proxy) sends only to ready backends, in turn, and traces each
// numbered request to its end; the event-loop watch sees a stall and says when it began.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { describeStalls, watchEventLoop } from '../support/event-loop-watch.js';
import { LOAD_SEQUENCE_HEADER, startRoundRobinLb, type Backend, type RoundRobinLb } from '../support/round-robin-lb.js';
import { waitFor } from '../support/wait-for.js';

interface FakeReplica extends Backend {
  ready: boolean;
  /** Requests left unanswered, to stand for a replica that hangs. */
  hang: boolean;
  close(): void;
}

/** A backend that answers 200 with its name, and /readyz 200 or 503 as told. */
async function startBackend(name: string): Promise<FakeReplica> {
  const listen = async (server: http.Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const api = http.createServer((_req, res) => {
    if (!backend.hang) res.end(name);
  });
  const admin = http.createServer((_req, res) => res.writeHead(backend.ready ? 200 : 503).end());
  const backend: FakeReplica = {
    url: await listen(api),
    adminUrl: await listen(admin),
    ready: true,
    hang: false,
    close: () => {
      api.closeAllConnections();
      api.close();
      admin.close();
    },
  };
  return backend;
}

const numbered = (url: string, sequence: number, timeoutMs = 5_000) =>
  fetch(url, { headers: { [LOAD_SEQUENCE_HEADER]: String(sequence) }, signal: AbortSignal.timeout(timeoutMs) }).then(
    async (response) => ({ status: response.status, body: await response.text() }),
    (error: Error) => ({ status: 0, body: error.name }),
  );

describe('fault-test traffic: the balancer process and the event-loop watch', function () {
  this.timeout(30_000);
  let balancer: RoundRobinLb | undefined;
  const backends: FakeReplica[] = [];

  afterEach(async () => {
    await balancer?.close();
    balancer = undefined;
    for (const backend of backends.splice(0)) backend.close();
  });

  const start = async () => {
    balancer = await startRoundRobinLb({ pollMs: 50, slowMs: 200 });
    for (const name of ['a', 'b']) {
      const backend = await startBackend(name);
      backends.push(backend);
      await balancer.add(backend);
    }
    const lb = balancer;
    await waitFor(async () => (await lb.ready()).length === 2, { what: 'both backends in rotation', timeoutMs: 5_000 });
    return lb;
  };

  it('sends in turn to the ready backends, and takes one out after two failed readiness polls', async () => {
    const lb = await start();
    const bodies = [];
    for (let n = 0; n < 4; n++) bodies.push((await numbered(lb.url, n)).body);
    expect([...bodies].sort()).to.deep.equal(['a', 'a', 'b', 'b']);
    expect(bodies[0]).to.not.equal(bodies[1]);

    const [first] = backends;
    if (first === undefined) throw new Error('no backend');
    first.ready = false;
    await waitFor(async () => (await lb.ready()).length === 1, { what: 'backend a out of rotation', timeoutMs: 5_000 });
    for (let n = 4; n < 8; n++) expect((await numbered(lb.url, n)).body).to.equal('b');
    expect((await lb.counts()).noBackend).to.equal(0);
  });

  it('traces each numbered request: where it went and how it ended, or that it never came', async () => {
    const lb = await start();
    await numbered(lb.url, 1);
    const [first] = backends;
    if (first === undefined) throw new Error('no backend');
    first.hang = true;
    // Round robin: one of the next two requests goes to the hanging backend, whose client gives up after 300 ms.
    let hung: number | undefined;
    for (let n = 2; n < 4 && hung === undefined; n++) if ((await numbered(lb.url, n, 300)).status === 0) hung = n;
    if (hung === undefined) throw new Error('No request reached the hanging backend');
    const sequence = hung;
    const traces = await waitFor(async () => {
      const found = await lb.traces([1, sequence, 999]);
      return found[sequence]?.end !== undefined ? found : undefined;
    }, { what: `the end of request ${sequence}`, timeoutMs: 5_000 });
    expect(traces[1]?.end).to.include({ status: 200, clientGone: false });
    expect(traces[sequence]?.backend).to.equal(first.url);
    expect(traces[sequence]?.end).to.include({ status: null, clientGone: true });
    expect(traces[sequence]?.end?.ms).to.be.at.least(250);
    expect(traces, 'a request never sent').to.not.have.property('999');
    expect((await lb.slow())[first.url]?.count).to.equal(1);
  });

  it('reports a stall of the event loop, with when it began and how long it lasted', async () => {
    const watch = watchEventLoop({ stallMs: 300 });
    await sleep(120);
    const before = Date.now();
    while (Date.now() - before < 700) {
      // Holds the event loop, as a long synchronous task or a garbage collection would.
    }
    await sleep(120);
    const report = watch.stop();
    // The longest first; a busy machine may add stalls of its own, and make this one longer.
    const [stall] = report.stalls;
    expect(stall?.ms).to.be.at.least(620);
    expect(Date.parse(stall?.at ?? '')).to.be.within(before - 1_000, before + 100);
    expect(report.delayMaxMs).to.be.at.least(620);
    expect(describeStalls(report)).to.match(/^\d\d:\d\d:\d\d\.\d{3} for \d+ ms$/);
    expect(describeStalls({ delayP99Ms: 0, delayMaxMs: 0, stalls: [] })).to.equal('none');
  });
});
