// The little the reflector needs to know about any Kubernetes object and about failed requests.

export interface ReflectedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    managedFields?: unknown;
  };
}

/** A pino-compatible logger, narrowed to what src/k8s calls. */
export interface K8sLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export type KubeErrorCode = 'KUBE_HTTP_STATUS' | 'KUBE_WATCH_ERROR' | 'KUBE_STALLED' | 'KUBE_BAD_RESPONSE';

/**
 * A failed LIST or WATCH; `statusCode` is the HTTP or Status code when the server gave one, and
 * `retryAfterMs` its Retry-After (429 from API priority and fairness, 503 while it starts).
 */
export class KubeRequestError extends Error {
  constructor(
    readonly code: KubeErrorCode,
    message: string,
    readonly statusCode?: number,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'KubeRequestError';
  }
}

export function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { statusCode?: unknown }).statusCode;
  return typeof code === 'number' ? code : undefined;
}

/**
 * managedFields is server-side-apply bookkeeping, often larger than the rest of the object, and
 * nothing downstream reads it: dropping it before delivery keeps memory and mapper input small.
 */
export function withoutManagedFields<T extends ReflectedObject>(object: T): T {
  if (object.metadata?.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}
