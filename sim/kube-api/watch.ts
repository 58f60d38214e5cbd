// WATCH semantics: newline-delimited JSON events over a chunked 200 response, replayed from a
// resourceVersion (exclusive), periodic BOOKMARKs when asked, a server-side end after timeoutSeconds,
// and an ERROR event carrying a 410 Expired Status when the version was compacted away (the real API
// answers a too-old watch with 200 + ERROR, not with an HTTP 410).
import type { ServerResponse } from 'node:http';
import type { LabelMatcher } from './list.js';
import { RESOURCES, kubeStatus, type ResourceName } from './resources.js';
import type { KubeStore, StoreEvent } from './store.js';

export interface WatchParams {
  resource: ResourceName;
  namespace?: string;
  matcher: LabelMatcher;
  /** Absent or "0": start with a synthetic ADDED per existing object, as the real API does. */
  resourceVersion?: string;
  timeoutSeconds: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
}

interface WireEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

/** Streams events into `res` until timeout, client close or `res.destroy()`. */
export function serveWatch(store: KubeStore, res: ServerResponse, params: WatchParams): void {
  const info = RESOURCES[params.resource];
  const write = (event: WireEvent): void => {
    // An event can commit between res.end() (timeout) and 'close'; writing then would throw.
    if (res.writableEnded || res.destroyed) return;
    res.write(`${JSON.stringify(event)}\n`);
  };
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  res.flushHeaders();

  const from = params.resourceVersion;
  if (from === undefined || from === '' || from === '0') {
    for (const object of store.list(params.resource, params.namespace)) {
      if (params.matcher(object.metadata.labels)) write({ type: 'ADDED', object });
    }
  } else {
    const backlog = store.eventsSince(Number(from));
    if (backlog === 'expired') {
      write({ type: 'ERROR', object: kubeStatus(410, `too old resource version: ${from} (${store.compactedVersion})`) });
      res.end();
      return;
    }
    for (const event of backlog) forward(event);
  }
  // Subscribing in the same tick as reading the backlog leaves no gap: the store commits synchronously.
  const unsubscribe = store.subscribe(forward);
  const bookmarkTimer = params.bookmarks
    ? setInterval(() => {
        const metadata = { resourceVersion: String(store.resourceVersion) };
        write({ type: 'BOOKMARK', object: { kind: info.kind, apiVersion: info.apiVersion, metadata } });
      }, params.bookmarkIntervalMs)
    : undefined;
  const timeout = setTimeout(() => res.end(), params.timeoutSeconds * 1000);
  res.on('close', () => {
    unsubscribe();
    clearInterval(bookmarkTimer);
    clearTimeout(timeout);
  });

  function forward(event: StoreEvent): void {
    if (event.resource !== params.resource) return;
    if (params.namespace !== undefined && event.object.metadata.namespace !== params.namespace) return;
    const type = visibleType(event, params.matcher);
    if (type !== undefined) write({ type, object: event.object });
  }
}

/** A label-selected watch sees an object enter (ADDED) or leave (DELETED) the selection on MODIFIED. */
function visibleType(event: StoreEvent, matcher: LabelMatcher): StoreEvent['type'] | undefined {
  const now = matcher(event.object.metadata.labels);
  if (event.type !== 'MODIFIED') return now ? event.type : undefined;
  const before = event.previous !== undefined && matcher(event.previous.metadata.labels);
  if (now) return before ? 'MODIFIED' : 'ADDED';
  return before ? 'DELETED' : undefined;
}
