// GET requests to the service's /v1 API with the caller's credentials. A refused request becomes a
// CliError with the API's message, code and request id (exit 1 for 4xx, 2 for 5xx); a service that
// cannot be reached, exit 2.
import { CliError } from './cli-error.js';
import type { Credentials } from './credentials.js';

export type Query = Record<string, string | number | boolean | undefined>;

interface ErrorBody {
  error?: { code?: string; message?: string; details?: { location?: string; field?: string; message?: string }[] };
  request_id?: string;
}

export class ApiClient {
  readonly #baseUrl: string;
  readonly #credentials: Credentials;

  constructor(baseUrl: string, credentials: Credentials) {
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#credentials = credentials;
  }

  /** The JSON body of a 200, or of another status `answers` names (health's 503). */
  async get<T>(path: string, query: Query = {}, answers: readonly number[] = []): Promise<T> {
    return JSON.parse(await this.#request(path, query, 'application/json', answers)) as T;
  }

  /** The body as the service sends it for `accept` (text/csv). */
  async getText(path: string, query: Query, accept: string): Promise<string> {
    return this.#request(path, query, accept, []);
  }

  async #request(path: string, query: Query, accept: string, answers: readonly number[]): Promise<string> {
    const url = new URL(this.#baseUrl + path);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    let response: Response;
    try {
      response = await fetch(url, {
        headers: {
          Accept: accept,
          Authorization: `Bearer ${this.#credentials.token}`,
          'X-Organization-Id': this.#credentials.organizationId,
        },
      });
    } catch (error) {
      const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
      throw new CliError(`Cannot reach the service at ${this.#baseUrl}: ${cause}`, 2);
    }
    const text = await response.text();
    if (response.ok || answers.includes(response.status)) return text;
    throw refused(response.status, text);
  }
}

function refused(status: number, text: string): CliError {
  let body: ErrorBody = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // Not the API's envelope (a proxy's page): its status says what there is to say.
  }
  const code = body.error?.code ?? `HTTP ${status}`;
  const lines = [
    `Error: ${body.error?.message ?? `the service answered HTTP ${status}`} ` +
      `(${code}${body.request_id ? `, request ${body.request_id}` : ''})`,
  ];
  for (const detail of body.error?.details ?? []) lines.push(`  ${detail.field ?? detail.location ?? ''}: ${detail.message ?? ''}`);
  return new CliError(lines.join('\n'), status >= 500 ? 2 : 1);
}
