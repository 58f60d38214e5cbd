// The read pool's refusal when its queue is full. A store error, not an HTTP one: the store knows
// nothing of status codes or headers; the API's error middleware turns it into 503 with Retry-After
// (src/api/middleware/error-envelope.ts maps any error that carries `retryAfterSeconds`).

export class IndexBusyError extends Error {
  /** How long the caller should wait before trying again: the queue drains in about that time. */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = 'IndexBusyError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
