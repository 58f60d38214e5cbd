// Calls to the public /v1 API with the signed-in token. Errors keep the API's own code, message,
// details and request_id, which the pages show as they are.
import type { ErrorBody, ListMetadata } from './contract.js';
import type { Session } from './session.js';

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorBody['error']['details'] = [],
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export interface Envelope<T> {
  data: T;
  metadata?: ListMetadata;
  request_id: string;
}

export type QueryValues = Record<string, string | number | undefined>;

export function apiUrl(path: string, query: QueryValues = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const search = params.toString();
  return `/v1${path}${search === '' ? '' : `?${search}`}`;
}

export async function apiGet<T>(session: Session, path: string, query: QueryValues = {}, signal?: AbortSignal): Promise<Envelope<T>> {
  const response = await apiFetch(session, path, query, 'application/json', signal);
  const body = (await response.json().catch(() => undefined)) as unknown;
  if (body === undefined) throw new ApiRequestError(response.status, 'HTTP_ERROR', `The service answered ${response.status} ${response.statusText}`);
  return body as Envelope<T>;
}

/** The API's answer in the form `accept` names (text/csv), once it is a success; else the API's error. */
export async function apiFetch(session: Session, path: string, query: QueryValues, accept: string, signal?: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(apiUrl(path, query), {
      headers: { Authorization: `Bearer ${session.token}`, 'X-Organization-Id': session.organizationId, Accept: accept },
      cache: 'no-store',
      credentials: 'omit',
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiRequestError(0, 'NETWORK', `The service did not answer (${(error as Error).message})`);
  }
  if (response.ok) return response;
  // Errors come as the JSON envelope whatever was asked for.
  const body = (await response.json().catch(() => undefined)) as Partial<ErrorBody> | undefined;
  const error = body?.error;
  if (error !== undefined && typeof error.message === 'string') {
    throw new ApiRequestError(response.status, error.code, error.message, error.details ?? [], body?.request_id);
  }
  throw new ApiRequestError(response.status, 'HTTP_ERROR', `The service answered ${response.status} ${response.statusText}`);
}
