// Which resource.k8s.io version the service watches, from the API server's discovery document: the
// newest it reads, none without the group (404, no error), and an error to retry for anything else.
// Then ClusterInformers against a server whose discovery fails first: the DRA informers start once it
// answers, and a server without the group is asked again until an upgrade brings it.
import { expect } from 'chai';
import sinon from 'sinon';
import { chooseDraVersion, discoverDraVersion, type DraVersion } from '../../src/k8s/dra-discovery.js';
import { ClusterInformers } from '../../src/k8s/cluster-informers.js';
import { KubeRequestError } from '../../src/k8s/kube-object.js';
import { rejectionOf } from '../support/rejection.js';
import { startHandServer, type HandServer } from './hand-server.js';

const group = (...versions: string[]) => ({
  kind: 'APIGroup',
  apiVersion: 'v1',
  name: 'resource.k8s.io',
  versions: versions.map((version) => ({ groupVersion: `resource.k8s.io/${version}`, version })),
  preferredVersion: { groupVersion: `resource.k8s.io/${versions[0]}`, version: versions[0] },
});

const spyLogger = () => ({ debug: sinon.spy(), info: sinon.spy(), warn: sinon.spy(), error: sinon.spy() });

describe('k8s/dra-discovery', () => {
  it('chooses v1, else v1beta2, else v1beta1, whatever the server prefers, and none of an unknown list', () => {
    expect(chooseDraVersion(group('v1beta1', 'v1', 'v1beta2'))).to.equal('v1');
    expect(chooseDraVersion(group('v1beta1', 'v1beta2'))).to.equal('v1beta2');
    expect(chooseDraVersion(group('v1alpha3', 'v1beta1'))).to.equal('v1beta1');
    expect(chooseDraVersion(group('v1alpha3'))).to.equal(null);
    expect(chooseDraVersion({ versions: 'v1' })).to.equal(null);
    expect(chooseDraVersion(null)).to.equal(null);
  });

  describe('against an API server', () => {
    let hand: HandServer;
    beforeEach(async () => {
      hand = await startHandServer();
    });
    afterEach(() => hand.close());

    it('reads the group document with the kubeconfig\'s credentials', async () => {
      hand.respond = (res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(group('v1', 'v1beta2')));
      expect(await discoverDraVersion(hand.kubeConfig, new AbortController().signal)).to.equal('v1');
      expect(hand.requests.map((url) => url.pathname)).to.deep.equal(['/apis/resource.k8s.io']);
      expect(hand.credentials).to.deep.equal(['Bearer secret-token']);
    });

    it('says no DRA for a 404, and throws for a server error or a body that is not JSON', async () => {
      hand.respond = (res) => void res.writeHead(404, { 'content-type': 'application/json' }).end('{"kind":"Status","code":404}');
      expect(await discoverDraVersion(hand.kubeConfig, new AbortController().signal)).to.equal(null);
      hand.respond = (res) => void res.writeHead(503).end();
      expect((await rejectionOf(discoverDraVersion(hand.kubeConfig, new AbortController().signal))).message).to.match(/resource\.k8s\.io.*HTTP 503/);
      hand.respond = (res) => void res.writeHead(200).end('<html>');
      const error = await rejectionOf(discoverDraVersion(hand.kubeConfig, new AbortController().signal));
      expect(error).to.be.instanceOf(KubeRequestError);
      expect(error.message).to.match(/not JSON/);
    });
  });

  /** Informers of namespace `ml` on `hand`, whose discovery answers `answers` in turn (then the last one again). */
  function informersOn(hand: HandServer, answers: (() => Promise<DraVersion | null>)[], logger: ReturnType<typeof spyLogger>): ClusterInformers {
    const last = answers[answers.length - 1];
    return new ClusterInformers(hand.kubeConfig, {
      clusterId: 'c',
      origin: 'test',
      namespaces: ['ml'],
      dependencyWaitMs: 100,
      clock: { now: () => Date.now() },
      delay: (ms, signal) => new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.min(ms, 20));
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        });
      }),
      logger,
      tuning: { backoff: { baseMs: 10, maxMs: 10 } },
      discoverDra: () => (answers.shift() ?? last ?? (() => Promise.resolve(null)))(),
      draRediscoveryMs: 30,
      onEvent: () => undefined,
    });
  }

  /** The informers started, once all seven are, as `resource/namespace`; [] if they never are. */
  async function allStarted(informers: ClusterInformers): Promise<string[]> {
    for (let i = 0; i < 100; i += 1) {
      const resources = informers.status().informers.filter((i) => i.started).map((i) => `${i.resource}${i.namespace ? `/${i.namespace}` : ''}`);
      if (resources.length === 7) return resources.sort();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return [];
  }

  it('starts the DRA informers once a failing discovery answers, on the paths of the version found', async () => {
    const hand = await startHandServer();
    hand.respond = (res) => void res.writeHead(500).end();
    const logger = spyLogger();
    const informers = informersOn(hand, [
      () => Promise.reject(new KubeRequestError('KUBE_HTTP_STATUS', 'HTTP 503', 503)),
      () => Promise.resolve('v1beta2'),
    ], logger);
    try {
      informers.start();
      expect(await allStarted(informers)).to.deep.equal(['deviceclasses', 'jobs/ml', 'namespaces', 'nodes', 'pods/ml', 'resourceclaims/ml', 'resourceslices']);
      expect(informers.draVersion).to.equal('v1beta2');
      expect(hand.requests.map((url) => url.pathname)).to.include.members([
        '/apis/resource.k8s.io/v1beta2/namespaces/ml/resourceclaims', '/apis/resource.k8s.io/v1beta2/resourceslices', '/apis/resource.k8s.io/v1beta2/deviceclasses',
      ]);
      expect(logger.warn.calledWithMatch(sinon.match.any, 'Cannot discover resource.k8s.io yet: retrying')).to.equal(true);
      expect(logger.error.called).to.equal(false);
    } finally {
      await informers.stop();
      await hand.close();
    }
  });

  it('asks a server without the group again, quietly, and watches DRA once an upgrade brings it', async () => {
    const hand = await startHandServer();
    hand.respond = (res) => void res.writeHead(500).end();
    const logger = spyLogger();
    const informers = informersOn(hand, [() => Promise.resolve(null), () => Promise.resolve(null), () => Promise.resolve('v1')], logger);
    try {
      informers.start();
      expect(informers.status().informers.map((i) => i.resource)).to.not.include('resourceclaims');
      expect(await allStarted(informers)).to.include.members(['resourceclaims/ml', 'resourceslices', 'deviceclasses']);
      expect(informers.draVersion).to.equal('v1');
      expect(logger.warn.neverCalledWithMatch(sinon.match.any, sinon.match(/resource\.k8s\.io/))).to.equal(true);
    } finally {
      await informers.stop();
      await hand.close();
    }
  });

  it('takes a forbidden discovery as no DRA, says so once, and asks again so that fixed rights take effect', async () => {
    const hand = await startHandServer();
    hand.respond = (res) => void res.writeHead(500).end();
    const logger = spyLogger();
    const forbidden = () => Promise.reject(new KubeRequestError('KUBE_HTTP_STATUS', 'HTTP 403', 403));
    const informers = informersOn(hand, [forbidden, forbidden, () => Promise.resolve('v1')], logger);
    try {
      informers.start();
      expect(await allStarted(informers)).to.include.members(['resourceclaims/ml', 'resourceslices', 'deviceclasses']);
      expect(logger.warn.getCalls().filter((call) => /forbidden/.test(String(call.args[1])))).to.have.length(1);
    } finally {
      await informers.stop();
      await hand.close();
    }
  });
});
