// Error codes of the API contract and the HTTP status each maps to (DECISIONS "Errors").
// Code below the HTTP layer throws ApiError with a code; only the error middleware turns it into a body.

export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  /** A request Node's HTTP parser refused (a control byte in the request line or a header): no handler saw it. */
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** The client did not send its headers, or its whole request, within the listener's timeouts. */
  REQUEST_TIMEOUT: 408,
  RATE_LIMITED: 429,
  /** The request line and headers together are over the listener's limit (src/runtime/http-listener.ts). */
  REQUEST_TOO_LARGE: 431,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  location: 'query' | 'path' | 'header';
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: ErrorDetail[];
  /** Extra response headers the error needs (WWW-Authenticate, Retry-After, Allow). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details ?? [];
    this.headers = options.headers ?? {};
  }
}

export function validationError(details: ErrorDetail[]): ApiError {
  const first = details[0];
  const message = first ? `Invalid ${first.location} parameter "${first.field}": ${first.message}` : 'Invalid request';
  return new ApiError('VALIDATION_ERROR', message, { details });
}
