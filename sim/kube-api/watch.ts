// WATCH semantics: newline-delimited JSON events over a chunked 200 response, periodic BOOKMARKs when
// asked, a server-side end after timeoutSeconds, and an ERROR event carrying a 410 Expired Status when
// the version was compacted away (the real API answers a too-old watch with 200 + ERROR, not with an
// HTTP 410).
//
// Where the stream starts, as in the real API (https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-watch):
// - resourceVersion unset or "": "Get State and Start at Most Recent". A synthetic ADDED per object
//   that exists now, then every change after now.
// - "0": "Get State and Start at Any". The real API may serve that state from its (possibly stale)
//   watch cache; the sim's "any" state is its current state, so it behaves as unset.
// - any other version: "Start at Exact". Every change after that version (exclusive), no synthetic
//   events, or the 410 ERROR when it is older than the last compaction.
// So a client that LISTs and then watches from "0" (an empty store's version in a naive sim) gets the
// whole state again as ADDED; the store's versions start at 1000 so that this never happens by accident.
import type { ServerResponse } from 'node:http';
import type { LabelMatcher } from './list.js';
import { RESOURCES, kubeStatus, type KubeObject, type ResourceName } from './resources.js';
import type { KubeStore, StoreEvent } from './store.js';
import { objectJson } from './wire.js';

export interface WatchParams {
  resource: ResourceName;
  namespace?: string;
  matcher: LabelMatcher;
  /** Absent, "" or "0": start with a synthetic ADDED per existing object; else a version (validated by the caller). */
  resourceVersion?: string;
  timeoutSeconds: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
}

type WireType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Streams events into `res` until timeout, client close or `res.destroy()`. */
export function serveWatch(store: KubeStore, res: ServerResponse, params: WatchParams): void {
  const info = RESOURCES[params.resource];
  let corked = false;
  const writeLine = (line: string): void => {
    // An event can commit between res.end() (timeout) and 'close'; writing then would throw.
    if (res.writableEnded || res.destroyed) return;
    // Events committed in one tick leave in one writev (one syscall), not one write each.
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(() => {
        corked = false;
        res.uncork();
      });
    }
    res.write(line);
  };
  // Node 24 drops what is still corked when end() comes in the same tick: uncork first.
  const endStream = (): void => {
    if (corked) {
      corked = false;
      res.uncork();
    }
    res.end();
  };
  const writeObject = (type: WireType, object: KubeObject): void => writeLine(`{"type":"${type}","object":${objectJson(object)}}\n`);
  const writeOther = (type: WireType, object: unknown): void => writeLine(`${JSON.stringify({ type, object })}\n`);
  res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  res.flushHeaders();

  const from = params.resourceVersion;
  let after: number;
  if (from === undefined || from === '' || from === '0') {
    after = store.resourceVersion;
    for (const object of store.list(params.resource, params.namespace)) {
      if (params.matcher(object.metadata.labels)) writeObject('ADDED', object);
    }
  } else {
    after = Number(from);
    const backlog = store.eventsSince(after);
    if (backlog === 'expired') {
      writeOther('ERROR', kubeStatus(410, `too old resource version: ${from} (${store.compactedVersion})`));
      endStream();
      return;
    }
    for (const event of backlog) forward(event);
  }
  // Subscribing in the same tick as reading the backlog leaves no gap: the store commits synchronously.
  const unsubscribe = store.subscribe(forward);
  const bookmarkTimer = params.bookmarks
    ? setInterval(() => {
        const metadata = { resourceVersion: String(store.resourceVersion) };
        writeOther('BOOKMARK', { kind: info.kind, apiVersion: info.apiVersion, metadata });
      }, params.bookmarkIntervalMs)
    : undefined;
  const timeout = setTimeout(endStream, params.timeoutSeconds * 1000);
  res.on('close', () => {
    unsubscribe();
    clearInterval(bookmarkTimer);
    clearTimeout(timeout);
  });

  function forward(event: StoreEvent): void {
    if (event.resource !== params.resource) return;
    // A version ahead of the store starts at that version: changes up to it are not sent.
    if (event.rv <= after) return;
    if (params.namespace !== undefined && event.object.metadata.namespace !== params.namespace) return;
    const type = visibleType(event, params.matcher);
    if (type !== undefined) writeObject(type, event.object);
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
