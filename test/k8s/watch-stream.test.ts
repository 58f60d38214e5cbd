// watchOnce against a hand-driven HTTP server: how the stream's bytes become events and outcomes,
// whatever the chunks, and what a bad line or an error status does.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { systemClock } from '../../src/domain/clock.js';
import { watchOnce, type WatchEventType } from '../../src/k8s/watch-stream.js';
import { eachDecoder } from './decoders.js';
import { startHandServer, type HandServer } from './hand-server.js';
import { fastDelay } from './reflector-harness.js';

const event = (type: string, name: string, rv: string) => JSON.stringify({ type, object: { metadata: { name, resourceVersion: rv } } });

describe('k8s/watch stream', () => {
  eachDecoder((decoder) => {
    let hand: HandServer;
    beforeEach(async () => {
      hand = await startHandServer();
    });
    afterEach(() => hand.close());

    const watch = async (onEvent: (type: WatchEventType, name: string | undefined, rv: string | undefined) => void = () => undefined) => {
      const controller = new AbortController();
      return watchOnce(hand.kubeConfig, {
        path: '/api/v1/pods', resourceVersion: '100', timeoutSeconds: 300, stallTimeoutMs: 5_000, clock: systemClock, delay: fastDelay,
        signal: controller.signal, decoder: decoder(), onEvent: (type, object) => onEvent(type, object.metadata?.name, object.metadata?.resourceVersion),
      });
    };

    it('asks for a watch from the version with bookmarks and the kubeconfig\'s token, and delivers every event of lines cut anywhere, bookmarks included, skipping a line that is not JSON', async () => {
      hand.respond = async (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const body = Buffer.from([event('ADDED', 'a', '101'), 'not json', event('MODIFIED', 'é-日本', '102'), event('BOOKMARK', '', '103'), event('DELETED', 'a', '104')].join('\n') + '\n');
        for (let i = 0; i < body.length; i += 7) {
          res.write(body.subarray(i, i + 7));
          if (i % 70 === 0) await sleep(1);
        }
        res.end();
      };
      const seen: string[] = [];
      expect(await watch((type, name, rv) => seen.push(`${type} ${name} ${rv}`))).to.deep.equal({ kind: 'ended' });
      expect(seen).to.deep.equal(['ADDED a 101', 'MODIFIED é-日本 102', 'BOOKMARK  103', 'DELETED a 104']);
      const url = hand.requests[0];
      expect(Object.fromEntries(url?.searchParams ?? [])).to.include({ watch: 'true', allowWatchBookmarks: 'true', resourceVersion: '100', timeoutSeconds: '300' });
      expect(hand.credentials).to.deep.equal(['Bearer secret-token']);
    });

    it('ends as expired on an ERROR event with code 410 and on an HTTP 410, and as failed with the status on a 403', async () => {
      hand.respond = async (res) => {
        res.writeHead(200);
        res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version: 100 (200)' } }) + '\n');
      };
      const expired = await watch();
      expect(expired.kind).to.equal('expired');
      expect(expired.kind === 'expired' && expired.error.message).to.include('too old resource version');
      hand.respond = async (res) => {
        res.writeHead(410, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 410, message: 'gone' }));
      };
      expect((await watch()).kind).to.equal('expired');
      hand.respond = async (res) => {
        res.writeHead(403, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', code: 403, message: 'pods is forbidden: User "x" cannot watch resource "pods"' }));
      };
      const refused = await watch();
      expect(refused.kind).to.equal('failed');
      expect(refused.kind === 'failed' && refused.error).to.include({ code: 'KUBE_HTTP_STATUS', statusCode: 403 });
      expect(refused.kind === 'failed' && refused.error.message).to.include('cannot watch resource "pods"');
    });

    it('fails, and delivers nothing after it, once the consumer throws', async () => {
      hand.respond = async (res) => {
        res.writeHead(200);
        res.write(event('ADDED', 'a', '101') + '\n' + event('ADDED', 'b', '102') + '\n');
        await sleep(50);
        res.end(event('ADDED', 'c', '103') + '\n');
      };
      const seen: string[] = [];
      const outcome = await watch((_type, name) => {
        seen.push(name ?? '');
        if (name === 'a') throw new Error('consumer broke');
      });
      expect(outcome.kind).to.equal('failed');
      expect(seen).to.deep.equal(['a']);
    });
  });
});
