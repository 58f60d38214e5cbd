// LIST semantics: equality label selectors, `limit`/`continue` chunking in key order, and 410 for a
// continue token (or an Exact resourceVersion) that compaction has made unservable.
//
// One simplification: later chunks report the first chunk's resourceVersion, as the real API does, but
// hold the objects' current state, where etcd would serve the snapshot at that version. A client that
// watches from the list's version then sees again, as events, the changes a later chunk already showed
// (replayed ADDED/MODIFIED of what it holds, DELETED of what it never got), which a reflector must
// tolerate anyway after any relist.
import { RESOURCES, kubeStatus, type KubeObject, type KubeStatus, type ResourceName } from './resources.js';
import { keyOf, type KubeStore } from './store.js';
import { itemJson } from './wire.js';

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

/** The matcher for an absent selector; LIST recognises it to report remainingItemCount. */
export const MATCH_ALL: LabelMatcher = () => true;

/** Parses `a=b,c==d,e!=f,g,!h`; set-based selectors (`in`, `notin`) are not simulated and throw. */
export function parseLabelSelector(selector: string | null): LabelMatcher {
  const terms = (selector ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
  if (terms.length === 0) return MATCH_ALL;
  const tests = terms.map((term): LabelMatcher => {
    const m = /^(!?)([\w./-]+)\s*(?:(==|=|!=)\s*([\w.-]*))?$/.exec(term);
    if (m === null) throw new Error(`Cannot parse label selector "${selector}": term "${term}" is not an equality selector`);
    const [, not, key = '', op, value = ''] = m;
    if (op === undefined) return (labels) => (labels?.[key] !== undefined) !== (not === '!');
    if (not === '!') throw new Error(`Cannot parse label selector "${selector}": "!" cannot prefix "${term}"`);
    return op === '!=' ? (labels) => labels?.[key] !== value : (labels) => labels?.[key] === value;
  });
  return (labels) => tests.every((t) => t(labels));
}

export interface ListQuery {
  namespace?: string;
  matcher: LabelMatcher;
  limit?: number;
  continueToken?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

/** A 200 carries its body already serialized: the items' JSON joined into the list, with no second pass over it. */
export type ListResult = { status: 200; json: string } | { status: 400 | 410; body: KubeStatus };

interface ContinueToken {
  rv: number;
  after: string;
}

export function listObjects(store: KubeStore, resource: ResourceName, query: ListQuery): ListResult {
  const info = RESOURCES[resource];
  let rv = store.resourceVersion;
  let after: string | undefined;
  if (query.continueToken !== undefined) {
    const token = decodeToken(query.continueToken);
    if (token === undefined) return { status: 400, body: kubeStatus(400, `Cannot decode continue token "${query.continueToken}"`) };
    // The real API serves later chunks at the first chunk's revision; once compacted it cannot.
    if (token.rv < store.compactedVersion) {
      return { status: 410, body: kubeStatus(410, 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.') };
    }
    ({ rv, after } = token);
  } else if (query.resourceVersionMatch === 'Exact' && Number(query.resourceVersion) < store.compactedVersion) {
    // NotOlderThan (the default) is always satisfiable by the latest state; only Exact can be too old.
    return { status: 410, body: kubeStatus(410, `too old resource version: ${query.resourceVersion} (${store.compactedVersion})`) };
  }
  const limit = query.limit !== undefined && query.limit > 0 ? query.limit : undefined;
  const { items: page, more, remaining } = store.page(resource, {
    namespace: query.namespace,
    after,
    ...(query.matcher === MATCH_ALL ? {} : { matches: (o: KubeObject) => query.matcher(o.metadata.labels) }),
    limit,
  });
  const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
  const last = page.at(-1);
  if (more && last !== undefined) {
    metadata.continue = Buffer.from(JSON.stringify({ rv, after: keyOf(last.metadata) })).toString('base64url');
    if (remaining !== undefined) metadata.remainingItemCount = remaining;
  }
  // The real API omits kind/apiVersion on list items; consumers must not rely on them.
  const head = JSON.stringify({ kind: `${info.kind}List`, apiVersion: info.apiVersion, metadata });
  return { status: 200, json: `${head.slice(0, -1)},"items":[${page.map(itemJson).join(',')}]}` };
}

function decodeToken(raw: string): ContinueToken | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<ContinueToken>;
    return typeof parsed.rv === 'number' && typeof parsed.after === 'string' ? { rv: parsed.rv, after: parsed.after } : undefined;
  } catch {
    return undefined;
  }
}
