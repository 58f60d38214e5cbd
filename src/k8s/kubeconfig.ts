// Where a cluster's credentials come from, checked before anything connects: a kubeconfig that parses
// but names no current context, or a context without a cluster or server, would otherwise surface
// much later as an opaque request failure (or, through client-node's loadFromDefault, as a silent
// fallback to http://localhost:8080).
import { existsSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/** Files client-node reads for the in-cluster config; a pod with automountServiceAccountToken has them. */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export class KubeconfigError extends Error {
  readonly code = 'KUBECONFIG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

export interface LoadedKubeconfig {
  kubeConfig: KubeConfig;
  /** The current context's name: the default id of a remote cluster. */
  contextName: string;
  /** Where it came from, for logs and errors: a path, or "in-cluster service account". */
  origin: string;
}

/** Parses and checks kubeconfig text; `origin` names it in errors (a file path). */
export function kubeconfigFromText(text: string, origin: string): LoadedKubeconfig {
  if (text.trim() === '') throw new KubeconfigError(`Kubeconfig "${origin}" is empty`);
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(text);
  } catch (error) {
    throw new KubeconfigError(`Cannot read kubeconfig "${origin}": ${firstLine(error)}`);
  }
  return checked(kubeConfig, origin);
}

export interface HomeKubeconfigOptions {
  /** GPUCAP_KUBECONFIG, when set. */
  file?: string;
  env?: Record<string, string | undefined>;
  readFile: (path: string) => string;
  /** Whether a path exists (the service account token, ~/.kube/config). */
  exists?: (path: string) => boolean;
  home?: string;
}

/**
 * The home cluster: GPUCAP_KUBECONFIG, else the in-cluster service account (the normal case in a pod),
 * else the first file of $KUBECONFIG, else ~/.kube/config. Nothing found is an error naming all four.
 */
export function homeKubeconfig(options: HomeKubeconfigOptions): LoadedKubeconfig {
  const env = options.env ?? process.env;
  const exists = options.exists ?? existsSync;
  const fromFile = (path: string): LoadedKubeconfig => {
    let text: string;
    try {
      text = options.readFile(path);
    } catch (error) {
      throw new KubeconfigError(`Cannot read kubeconfig "${path}": ${firstLine(error)}`);
    }
    return kubeconfigFromText(text, path);
  };
  if (options.file !== undefined) return fromFile(options.file);
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host && port && exists(SERVICE_ACCOUNT_TOKEN)) return checked(inClusterConfig(host, port), 'in-cluster service account');
  const fromEnv = env.KUBECONFIG?.split(delimiter).find((path) => path !== '');
  if (fromEnv !== undefined) return fromFile(fromEnv);
  const userFile = join(options.home ?? homedir(), '.kube', 'config');
  if (exists(userFile)) return fromFile(userFile);
  throw new KubeconfigError(
    'No kubeconfig for the home cluster: set GPUCAP_KUBECONFIG, run in a pod with a service account token, ' +
      'set $KUBECONFIG or create ~/.kube/config (or, to run without it, set GPUCAP_HOME_CLUSTER_ENABLED=false ' +
      'and GPUCAP_CAPACITY_CONFIGMAPS_ENABLED=false: remote clusters only, no budgets)',
  );
}

/**
 * client-node's loadFromCluster() (service account CA, a token file re-read as the kubelet rotates
 * it), pointed at the API server of the environment this was given rather than process.env.
 */
function inClusterConfig(host: string, port: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromCluster();
  const scheme = ['80', '8080', '8001'].includes(port) ? 'http' : 'https';
  const server = `${scheme}://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  const clusters = kubeConfig.clusters.map((cluster) => ({ ...cluster, server }));
  kubeConfig.loadFromOptions({
    clusters,
    users: kubeConfig.users,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  return kubeConfig;
}

function checked(kubeConfig: KubeConfig, origin: string): LoadedKubeconfig {
  const contextName = kubeConfig.getCurrentContext();
  if (!contextName) throw new KubeconfigError(`Kubeconfig "${origin}" has no current-context`);
  const context = kubeConfig.getContextObject(contextName);
  if (context === null) throw new KubeconfigError(`Kubeconfig "${origin}": current-context "${contextName}" is not among its contexts`);
  const cluster = kubeConfig.getCluster(context.cluster);
  if (cluster === null) {
    throw new KubeconfigError(`Kubeconfig "${origin}": context "${contextName}" names ` +
      `cluster "${context.cluster}", which it does not define`);
  }
  if (!/^https?:\/\/[^/\s]+/.test(cluster.server ?? '')) {
    throw new KubeconfigError(`Kubeconfig "${origin}": cluster "${cluster.name}" needs a server URL (https://host:port), got "${cluster.server ?? ''}"`);
  }
  // client-node refuses every request to a plain-http server unless TLS checks are explicitly off.
  if (cluster.server.startsWith('http:') && cluster.skipTLSVerify !== true) {
    throw new KubeconfigError(`Kubeconfig "${origin}": cluster "${cluster.name}" uses plain http ` +
      `("${cluster.server}"), which the client refuses unless insecure-skip-tls-verify is true`);
  }
  if (context.user !== undefined && context.user !== '' && kubeConfig.getUser(context.user) === null) {
    throw new KubeconfigError(`Kubeconfig "${origin}": context "${contextName}" names user "${context.user}", which it does not define`);
  }
  return { kubeConfig, contextName, origin };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
