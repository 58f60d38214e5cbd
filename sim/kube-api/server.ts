// A simulated Kubernetes API server on loopback: LIST/WATCH/GET for the resources the service reads,
// bearer-token auth, and runtime fault injection. Used by tests and by the demo; never shipped.
// Optional API groups (Dynamic Resource Allocation's resource.k8s.io) are served, and discovered,
// only when asked for: without them the sim is a cluster that has never heard of the group.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { discoveryDocument } from './discovery.js';
import { KubeFaults } from './faults.js';
import { listObjects, parseLabelSelector, type LabelMatcher } from './list.js';
import { RESOURCES, kubeStatus, type OptionalApi, type ResourceName } from './resources.js';
import { KubeStore } from './store.js';
import { serveWatch } from './watch.js';
import { objectJson } from './wire.js';

export interface KubeApiOptions {
  /** Bearer token clients must send (default "sim-token"). */
  token?: string;
  /** Cluster, context and user name in kubeconfig() (default "sim"). */
  clusterName?: string;
  /** Period of BOOKMARK events on watches that allow them (default 1000 ms). */
  bookmarkIntervalMs?: number;
  /** Watch lifetime when the client sends no timeoutSeconds (default 1800 s, the real minRequestTimeout). */
  defaultWatchTimeoutSeconds?: number;
  /** An existing store, e.g. pre-seeded or shared with a second server. */
  store?: KubeStore;
  /**
   * Serve resource.k8s.io/v1 (ResourceClaims, ResourceSlices, DeviceClasses) and its discovery, as a
   * 1.34+ cluster does (default false: every path of the group answers 404, as on a cluster without it).
   */
  dra?: boolean;
}

export interface KubeApi {
  url: string;
  store: KubeStore;
  faults: KubeFaults;
  /** A kubeconfig (JSON, which is valid YAML) pointing at this server with token auth. */
  kubeconfig(): string;
  /** Open watch streams and the bytes written to them that their clients have not read yet. */
  watchStats(): { open: number; bufferedBytes: number };
  close(): Promise<void>;
}

interface Route {
  resource: ResourceName;
  namespace?: string;
  name?: string;
}

// Collections and single objects; the real API has no cluster-wide path to one namespaced object.
const ROUTES: { pattern: RegExp; route: (m: RegExpExecArray) => Route }[] = [
  { pattern: /^\/api\/v1\/(pods|configmaps|nodes|namespaces)$/, route: (m) => ({ resource: m[1] as ResourceName }) },
  { pattern: /^\/api\/v1\/(nodes|namespaces)\/([^/]+)$/, route: (m) => ({ resource: m[1] as ResourceName, name: m[2] }) },
  {
    pattern: /^\/api\/v1\/namespaces\/([^/]+)\/(pods|configmaps)(?:\/([^/]+))?$/,
    route: (m) => ({ resource: m[2] as ResourceName, namespace: m[1], name: m[3] }),
  },
  { pattern: /^\/apis\/batch\/v1\/jobs$/, route: () => ({ resource: 'jobs' }) },
  { pattern: /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs(?:\/([^/]+))?$/, route: (m) => ({ resource: 'jobs', namespace: m[1], name: m[2] }) },
  { pattern: /^\/apis\/resource\.k8s\.io\/v1\/(resourceclaims|resourceslices|deviceclasses)$/, route: (m) => ({ resource: m[1] as ResourceName }) },
  { pattern: /^\/apis\/resource\.k8s\.io\/v1\/(resourceslices|deviceclasses)\/([^/]+)$/, route: (m) => ({ resource: m[1] as ResourceName, name: m[2] }) },
  {
    pattern: /^\/apis\/resource\.k8s\.io\/v1\/namespaces\/([^/]+)\/resourceclaims(?:\/([^/]+))?$/,
    route: (m) => ({ resource: 'resourceclaims', namespace: m[1], name: m[2] }),
  },
];

export async function startKubeApi(options: KubeApiOptions = {}): Promise<KubeApi> {
  const token = options.token ?? 'sim-token';
  const name = options.clusterName ?? 'sim';
  const store = options.store ?? new KubeStore();
  const served = new Set<OptionalApi>(options.dra === true ? ['dra'] : []);
  // resource.k8s.io/v1 exists from 1.34 on: a sim serving it says so.
  const version = served.has('dra') ? { major: '1', minor: '34', gitVersion: 'v1.34.0-sim' } : { major: '1', minor: '33', gitVersion: 'v1.33.0-sim' };
  const watches = new Set<ServerResponse>();
  let reopen: NodeJS.Timeout | undefined;
  let endRestart: (() => void) | undefined;

  const server = createServer((req, res) => handle(req, res));
  const faults = new KubeFaults({
    dropWatches: () => {
      const count = watches.size;
      for (const res of watches) res.destroy();
      return count;
    },
    restart: (downMs) =>
      new Promise<void>((resolve) => {
        endRestart = resolve;
        server.close();
        server.closeAllConnections();
        // Same port on purpose: clients keep their URL, as with a restarted kube-apiserver.
        reopen = setTimeout(() => server.listen(port, '127.0.0.1', () => resolve()), downMs);
      }),
    compact: () => store.compact(),
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const query = new URL(req.url ?? '/', url);
    const watch = ['true', '1'].includes(query.searchParams.get('watch') ?? '');
    if (faults.intercept(req, res, { path: query.pathname, watch })) return;
    if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, kubeStatus(401, 'Unauthorized'));
    if (req.method !== 'GET') return send(res, 405, kubeStatus(405, `Method "${req.method}" is not simulated`));
    if (query.pathname === '/version') return send(res, 200, { ...version, platform: 'linux/amd64' });
    const discovery = discoveryDocument(query.pathname, served);
    if (discovery !== undefined) return send(res, 200, discovery);
    const route = matchRoute(query.pathname, served);
    if (route === undefined) return send(res, 404, kubeStatus(404, `Cannot find path "${query.pathname}"`));
    let matcher: LabelMatcher;
    try {
      matcher = parseLabelSelector(query.searchParams.get('labelSelector'));
    } catch (error) {
      return send(res, 400, kubeStatus(400, (error as Error).message));
    }
    const param = (key: string): string | undefined => query.searchParams.get(key) ?? undefined;
    const resourceVersion = param('resourceVersion');
    if (resourceVersion !== undefined && resourceVersion !== '' && !/^\d+$/.test(resourceVersion)) {
      return send(res, 400, kubeStatus(400, `resourceVersion: Invalid value: "${resourceVersion}": must be a non-negative integer`));
    }
    if (route.name !== undefined && watch) return send(res, 400, kubeStatus(400, 'Watching one object by path is not simulated: use a collection'));
    if (route.name !== undefined) {
      const found = store.get(route.resource, { namespace: route.namespace, name: route.name });
      if (found === undefined) return send(res, 404, kubeStatus(404, `${route.resource} "${route.name}" not found`));
      return sendJson(res, 200, objectJson(found));
    }
    if (watch) {
      watches.add(res);
      res.on('close', () => watches.delete(res));
      const timeout = Number(param('timeoutSeconds') ?? options.defaultWatchTimeoutSeconds ?? 1800);
      return serveWatch(store, res, {
        resource: route.resource,
        namespace: route.namespace,
        matcher,
        resourceVersion,
        timeoutSeconds: timeout,
        bookmarks: param('allowWatchBookmarks') === 'true',
        bookmarkIntervalMs: options.bookmarkIntervalMs ?? 1000,
      });
    }
    const limit = param('limit');
    const result = listObjects(store, route.resource, {
      namespace: route.namespace,
      matcher,
      limit: limit === undefined ? undefined : Number(limit),
      continueToken: param('continue'),
      resourceVersion,
      resourceVersionMatch: param('resourceVersionMatch'),
    });
    if (result.status === 200) return sendJson(res, 200, result.json);
    return send(res, result.status, result.body);
  }

  return {
    url,
    store,
    faults,
    kubeconfig: () =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        // client-node refuses plain http unless TLS verification is explicitly skipped.
        clusters: [{ name, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
        users: [{ name, user: { token } }],
        contexts: [{ name, context: { cluster: name, user: name } }],
        'current-context': name,
      }),
    watchStats: () => {
      let bufferedBytes = 0;
      for (const res of watches) bufferedBytes += res.writableLength;
      return { open: watches.size, bufferedBytes };
    },
    close: () =>
      new Promise<void>((resolve) => {
        // A close() during a restart's down period cancels the re-listen and settles restart().
        clearTimeout(reopen);
        endRestart?.();
        server.closeAllConnections();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };
}

/** The route of `pathname`; undefined also for a resource of a group not served, which the real API does not know either. */
function matchRoute(pathname: string, served: ReadonlySet<OptionalApi>): Route | undefined {
  for (const { pattern, route } of ROUTES) {
    const m = pattern.exec(pathname);
    if (m === null) continue;
    const found = route(m);
    const requires = RESOURCES[found.resource].requires;
    return requires === undefined || served.has(requires) ? found : undefined;
  }
  return undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  sendJson(res, status, JSON.stringify(body));
}

function sendJson(res: ServerResponse, status: number, json: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(json);
}
