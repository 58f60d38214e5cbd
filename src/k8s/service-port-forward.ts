// kubectl gpucap's way to the service without --url: the kubeconfig's current (or named) context,
// the chart's Service found by its labels, a ready pod behind it, and a local port forwarded to that
// pod's API port through the API server (pods/portforward: the API server proxies the stream to the
// pod's kubelet), as `kubectl port-forward` does, without a second terminal.
//
// client-node's PortForward carries one TCP connection per WebSocket, so the local server opens one
// per accepted connection. It neither ends the local socket when the stream closes nor reports what
// the kubelet writes on the error channel: both are done here.
import { createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { CoreV1Api, KubeConfig, PortForward, type V1Pod, type V1Service } from '@kubernetes/client-node';

/**
 * The chart's labels (charts/gpu-capacity-api/templates/_helpers.tpl): the API Service of every
 * release. The admin Service carries the same name label and `component: admin`; it is left out, or
 * every release would look like two services.
 */
export const SERVICE_SELECTOR = 'app.kubernetes.io/name=gpu-capacity-api,app.kubernetes.io/component!=admin';
const API_PORT_NAME = 'api';

export interface ServiceForwardOptions {
  context: string | undefined;
  namespace: string | undefined;
  /** Defaults to $KUBECONFIG or ~/.kube/config, as kubectl reads them. */
  kubeConfig?: KubeConfig;
}

export interface ServiceForward {
  url: string;
  /** Where it forwards to: `namespace/pod:port`. */
  target: string;
  /** Why the last forwarded connection failed, if one did: what the API server or kubelet said. */
  failure(): string | undefined;
  close(): Promise<void>;
}

export async function openServicePortForward(options: ServiceForwardOptions): Promise<ServiceForward> {
  const kubeConfig = options.kubeConfig ?? loadKubeConfig();
  if (options.context !== undefined) {
    if (kubeConfig.getContextObject(options.context) === null) {
      throw new Error(`The kubeconfig has no context "${options.context}" (contexts: ` +
        `${kubeConfig.getContexts().map((c) => c.name).join(', ') || 'none'})`);
    }
    kubeConfig.setCurrentContext(options.context);
  }
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const service = await findService(
    core,
    options.namespace ?? kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace,
    options.namespace !== undefined,
  );
  const namespace = service.metadata?.namespace ?? 'default';
  const pod = await readyPod(core, service, namespace);
  const port = apiPort(service, pod);
  const podName = pod.metadata?.name ?? '';
  const forward = new PortForward(kubeConfig);
  const sockets = new Set<Socket>();
  let failure: string | undefined;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    void forwardConnection(forward, { namespace, pod: podName, port }, socket, (reason) => (failure = reason));
  });
  await listen(server);
  const address = server.address();
  const localPort = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${localPort}`,
    target: `${namespace}/${podName}:${port}`,
    failure: () => failure,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function loadKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  if (kubeConfig.getCurrentCluster() === null) {
    throw new Error('No Kubernetes cluster: the kubeconfig ($KUBECONFIG or ~/.kube/config) ' +
      'has no current context; pass --context, or --url to skip the discovery');
  }
  return kubeConfig;
}

/**
 * The chart's Service: in `namespace` when one was asked (or the context names one), else in any
 * namespace the caller may list. More than one is ambiguous: the error lists them for --namespace.
 */
async function findService(core: CoreV1Api, namespace: string | undefined, asked: boolean): Promise<V1Service> {
  const where = asked || namespace !== undefined ? `namespace "${namespace}"` : 'any namespace';
  const list = await kubeCall(`Cannot list the services of ${where}`, () =>
    namespace !== undefined
      ? core.listNamespacedService({ namespace, labelSelector: SERVICE_SELECTOR })
      : core.listServiceForAllNamespaces({ labelSelector: SERVICE_SELECTOR }));
  const services = list.items;
  if (services.length === 0 && namespace !== undefined && !asked) return findService(core, undefined, false);
  if (services.length === 0) {
    throw new Error(`No gpu-capacity-api service (label ${SERVICE_SELECTOR}) in ` +
      `${where}; pass --namespace, or --url to skip the discovery`);
  }
  if (services.length > 1) {
    const names = services.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`).join(', ');
    throw new Error(`More than one gpu-capacity-api service (${names}): pass --namespace (and --context) to choose`);
  }
  return services[0] as V1Service;
}

async function readyPod(core: CoreV1Api, service: V1Service, namespace: string): Promise<V1Pod> {
  const selector = Object.entries(service.spec?.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
  const name = `${namespace}/${service.metadata?.name}`;
  if (selector === '') throw new Error(`Service ${name} selects no pods (it has no selector)`);
  const pods = (await kubeCall(
    `Cannot list the pods of service ${name}`,
    () => core.listNamespacedPod({ namespace, labelSelector: selector }),
  )).items;
  const ready = pods.filter(
    (p) => p.metadata?.deletionTimestamp === undefined && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  if (ready.length === 0) {
    throw new Error(`No ready pod behind service ${name} (${pods.length} pod(s): kubectl get pods -n ${namespace} -l ${selector})`);
  }
  return ready[0] as V1Pod;
}

/** The container port behind the Service's `api` port (a name resolves through the pod's containers). */
function apiPort(service: V1Service, pod: V1Pod): number {
  const ports = service.spec?.ports ?? [];
  const target = (ports.find((p) => p.name === API_PORT_NAME) ?? ports[0])?.targetPort;
  if (typeof target === 'number') return target;
  const named = pod.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => p.name === (target ?? API_PORT_NAME));
  if (named === undefined) throw new Error(`Pod ${pod.metadata?.name} has no container port "${target ?? API_PORT_NAME}"`);
  return named.containerPort;
}

async function kubeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const failed = error as { code?: number; body?: unknown; message?: string };
    const body = typeof failed.body === 'string' ? safeJson(failed.body) : failed.body;
    const message = (body as { message?: string } | undefined)?.message ?? failed.message ?? String(error);
    throw new Error(`${what}: ${failed.code !== undefined ? `HTTP ${failed.code}: ` : ''}${message}`, { cause: error });
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

/** One local connection through its own stream to the pod; either side closing closes the other. */
async function forwardConnection(
  forward: PortForward,
  target: { namespace: string; pod: string; port: number },
  socket: Socket,
  failed: (reason: string) => void,
): Promise<void> {
  // What the kubelet writes on the error channel ("error forwarding port …"): the connection failed.
  // The channel opens with the port number, which client-node strips, leaving an empty write.
  const errors = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (chunk.length > 0) {
        failed(chunk.toString('utf8').trim());
        socket.destroy();
      }
      done();
    },
  });
  try {
    const ws = await forward.portForward(target.namespace, target.pod, [target.port], socket, errors, socket);
    if (typeof ws === 'function') throw new Error('port-forward returned no stream');
    ws.on('close', () => socket.end());
    socket.once('close', () => ws.close());
  } catch (error) {
    failed(`${(error as Error).message} (pods/portforward of ${target.namespace}/${target.pod})`);
    socket.destroy();
  }
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
}
