// listPages against a hand-driven HTTP server: pages followed by their continue tokens, the selected
// fields of each item, and what a body that is not a JSON object or has no version does.
import { expect } from 'chai';
import { listPages } from '../../src/k8s/list-pages.js';
import type { ReflectedObject } from '../../src/k8s/kube-object.js';
import { eachDecoder } from './decoders.js';
import { startHandServer, type HandServer } from './hand-server.js';

describe('k8s/list pages', () => {
  let hand: HandServer;
  beforeEach(async () => {
    hand = await startHandServer();
  });
  afterEach(() => hand.close());

  eachDecoder((decoder) => {
    const list = (pages: ReflectedObject[][]) =>
      listPages(hand.kubeConfig, { path: '/api/v1/pods', pageSize: 2, signal: new AbortController().signal, decoder: decoder(), fields: { metadata: { name: true } }, onPage: (items) => pages.push(items) });

    it('follows the continue tokens, keeps the first page\'s version, and delivers the selected fields of each item', async () => {
      hand.respond = (res, url) => {
        const next = url.searchParams.get('continue');
        const body = next === null
          ? { metadata: { resourceVersion: '10', continue: 'page-2' }, items: [{ metadata: { name: 'a', uid: 'u-a' }, spec: { nodeName: 'n' } }, { metadata: { name: 'b' } }] }
          : { metadata: { resourceVersion: '11', continue: '' }, items: [{ metadata: { name: 'c' }, status: { phase: 'Running' } }] };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const pages: ReflectedObject[][] = [];
      expect(await list(pages)).to.deep.equal({ resourceVersion: '10', items: 3, pages: 2 });
      expect(pages).to.deep.equal([[{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }], [{ metadata: { name: 'c' } }]]);
      expect(hand.requests.map((url) => [url.searchParams.get('limit'), url.searchParams.get('continue')])).to.deep.equal([['2', null], ['2', 'page-2']]);
    });

    it('fails with KUBE_BAD_RESPONSE on a 200 whose body is not a JSON object, and on a page without a version', async () => {
      hand.respond = (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>a proxy\'s login page</html>');
      };
      const notJson = await list([]).then(() => expect.fail('the LIST should fail'), (error: Error) => error);
      expect(notJson).to.include({ code: 'KUBE_BAD_RESPONSE' });
      expect(notJson.message).to.equal('Cannot list "/api/v1/pods": HTTP 200 with a body that is not a JSON object');
      hand.respond = (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ items: [] }));
      };
      const noVersion = await list([]).then(() => expect.fail('the LIST should fail'), (error: Error) => error);
      expect(noVersion.message).to.equal('Cannot list "/api/v1/pods": the response has no resourceVersion');
    });
  });
});
