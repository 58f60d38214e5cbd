// Who a bearer token belongs to and whether that user may GET a non-resource path, asked of the API
// server the way Kubernetes' own components ask it (controller-runtime's metrics filter,
// kube-rbac-proxy): a TokenReview, then a SubjectAccessReview for the user, groups, uid and extra the
// review returned. The service's own identity needs `create` on both (ClusterRole system:auth-delegator).
// A review that cannot be had (unreachable, timed out, refused, a 5xx) throws AccessReviewError: the
// caller must fail closed.
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  createConfiguration,
  ServerConfiguration,
  type KubeConfig,
  type RequestContext,
  type ResponseContext,
  type V1UserInfo,
} from '@kubernetes/client-node';

export type AccessReviewAnswer =
  | { outcome: 'allowed'; user: string }
  | { outcome: 'unauthenticated'; reason: string }
  | { outcome: 'forbidden'; user: string; reason: string };

/** One token's review: TokenReview, then (when authenticated) SubjectAccessReview. */
export type AccessReview = (token: string) => Promise<AccessReviewAnswer>;

export class AccessReviewError extends Error {
  readonly code = 'ACCESS_REVIEW_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AccessReviewError';
  }
}

export interface NonResourceAccess {
  verb: string;
  /** The non-resource URL, as an RBAC rule's nonResourceURLs names it: `/metrics`. */
  path: string;
  /** Each of the two requests is abandoned after this; a hung API server must not hold a scrape forever. */
  timeoutMs: number;
}

/** Reviews tokens against the current cluster of `kubeConfig`, with its credentials (token files re-read as they rotate). */
export function nonResourceAccessReview(kubeConfig: KubeConfig, access: NonResourceAccess): AccessReview {
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new AccessReviewError('Cannot review tokens: the kubeconfig has no current cluster');
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(server, {}),
    authMethods: { default: kubeConfig },
    promiseMiddleware: [abortAfter(access.timeoutMs)],
  });
  const authentication = new AuthenticationV1Api(configuration);
  const authorization = new AuthorizationV1Api(configuration);
  return async (token) => {
    const review = await call('TokenReview', () =>
      authentication.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } }),
    );
    const user = review.status?.user;
    if (review.status?.authenticated !== true || user?.username === undefined || user.username === '') {
      return { outcome: 'unauthenticated', reason: review.status?.error || 'the API server did not authenticate the token' };
    }
    const decision = await call('SubjectAccessReview', () =>
      authorization.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { ...subjectOf(user), nonResourceAttributes: { path: access.path, verb: access.verb } },
        },
      }),
    );
    const username = user.username;
    if (decision.status?.allowed === true) return { outcome: 'allowed', user: username };
    const reason = decision.status?.reason || decision.status?.evaluationError || 'no RBAC rule allows it';
    return { outcome: 'forbidden', user: username, reason };
  };
}

function subjectOf(user: V1UserInfo): { user: string; groups?: string[]; uid?: string; extra?: Record<string, string[]> } {
  return {
    user: user.username ?? '',
    ...(user.groups === undefined ? {} : { groups: user.groups }),
    ...(user.uid === undefined || user.uid === '' ? {} : { uid: user.uid }),
    ...(user.extra === undefined ? {} : { extra: user.extra }),
  };
}

interface RequestMiddleware {
  pre(context: RequestContext): Promise<RequestContext>;
  post(context: ResponseContext): Promise<ResponseContext>;
}

/** client-node's requests have no timeout of their own; this gives each an abort signal. */
function abortAfter(timeoutMs: number): RequestMiddleware {
  return {
    pre: async (context) => {
      context.setSignal(AbortSignal.timeout(timeoutMs));
      return context;
    },
    post: async (context) => context,
  };
}

async function call<T>(what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw new AccessReviewError(`${what} failed: ${describeFailure(error)}`, { cause: error });
  }
}

/** One line: the status and the server's message, or why no answer came. */
function describeFailure(error: unknown): string {
  const status = (error as { code?: unknown }).code;
  if (typeof status === 'number') {
    const message = serverMessage((error as { body?: unknown }).body);
    const hint = status === 403 ? ' (the service\'s identity needs the ClusterRole system:auth-delegator)' : '';
    return `the API server answered ${status}${message === undefined ? '' : ` (${message})`}${hint}`;
  }
  const name = (error as { name?: unknown }).name;
  if (name === 'AbortError' || name === 'TimeoutError') return 'the API server did not answer in time';
  const cause = (error as { code?: unknown; errno?: unknown }).code ?? (error as { errno?: unknown }).errno;
  const detail = typeof cause === 'string' ? cause : (error instanceof Error ? error.message : String(error)).split('\n')[0];
  return `the API server could not be reached (${detail})`;
}

function serverMessage(body: unknown): string | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.trim() === '' ? undefined : body.trim().slice(0, 200);
    }
  }
  const message = (parsed as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message.slice(0, 300) : undefined;
}
