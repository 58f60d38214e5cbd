// The console's pages and their paths. Each page's state is in its URL (filters in the query
// string), so any view can be shared; the service serves index.html at each of these paths.
import type { Session } from './session.js';

export type PageName = 'overview' | 'workloads' | 'workload' | 'rankings' | 'statistics' | 'fleet' | 'chargeback';

export interface Route {
  page: PageName;
  id?: string;
}

export const NAV: readonly { page: PageName; path: string; title: string }[] = [
  { page: 'overview', path: '/', title: 'Overview' },
  { page: 'workloads', path: '/workloads', title: 'Workloads' },
  { page: 'rankings', path: '/rankings', title: 'Rankings' },
  { page: 'statistics', path: '/statistics', title: 'Statistics' },
  // Every caller sees these entries: a token's role shows only in what the API answers, and each page
  // says when it answered that it is for ORG_ADMIN only.
  { page: 'fleet', path: '/fleet', title: 'Fleet' },
  { page: 'chargeback', path: '/chargeback', title: 'Chargeback' },
];

export function routeOf(pathname: string): Route | undefined {
  if (pathname === '/') return { page: 'overview' };
  if (pathname === '/workloads') return { page: 'workloads' };
  if (pathname === '/rankings') return { page: 'rankings' };
  if (pathname === '/statistics') return { page: 'statistics' };
  if (pathname === '/fleet') return { page: 'fleet' };
  if (pathname === '/chargeback') return { page: 'chargeback' };
  const workload = /^\/workloads\/([^/]+)$/.exec(pathname);
  if (workload?.[1] !== undefined) return { page: 'workload', id: decodeURIComponent(workload[1]) };
  return undefined;
}

export interface PageContext {
  session: Session;
  query: URLSearchParams;
  id?: string;
  /** Aborted when the user leaves the page, so a late answer never lands on the next one. */
  signal: AbortSignal;
  /** Opens another URL of the console, as a new history entry. */
  go(url: string): void;
  /** Sets the page's title (the h1 and the tab's). */
  title(text: string): void;
}

export type Page = (main: HTMLElement, context: PageContext) => Promise<void>;

/** The non-empty fields of a form as a query string, leaving out the values equal to the defaults. */
export function formQuery(form: HTMLFormElement, defaults: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(form)) {
    if (typeof value === 'string' && value !== '' && defaults[name] !== value) params.set(name, value);
  }
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}

/** The query string's values for the API: only the names it accepts, empty ones left out. */
export function pick(query: URLSearchParams, names: readonly string[], defaults: Record<string, string> = {}): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, query.get(name) || defaults[name]]));
}

/** The page's query string with the keyset cursor `next_token` set, or dropped (the first page). */
export function withCursor(query: URLSearchParams, cursor: string | undefined): string {
  const params = new URLSearchParams(query);
  if (cursor === undefined) params.delete('next_token');
  else params.set('next_token', cursor);
  const search = params.toString();
  return search === '' ? '' : `?${search}`;
}
