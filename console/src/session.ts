// The signed-in token and organization, in sessionStorage only: gone when the tab closes, never in
// localStorage or a cookie, and never sent anywhere but this origin's /v1 in the Authorization header.

export interface Session {
  token: string;
  organizationId: string;
}

const KEY = 'gpucap.console.session';

export function readSession(): Session | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(KEY) ?? 'null') as Partial<Session> | null;
    if (typeof value?.token === 'string' && value.token !== '' && typeof value.organizationId === 'string' && value.organizationId !== '') {
      return { token: value.token, organizationId: value.organizationId };
    }
  } catch {
    // A value this console did not write: treated as signed out.
  }
  return undefined;
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
}

/**
 * A sign-in link (`/#token=…&org=…`, as the demo prints) signs in and is then wiped from the address
 * bar and history: the fragment never reaches the server, and no longer stays in the URL.
 */
export function takeSessionFromFragment(): boolean {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const token = fragment.get('token');
  const organizationId = fragment.get('org');
  if (token === null || organizationId === null || token === '' || organizationId === '') return false;
  saveSession({ token, organizationId });
  history.replaceState(null, '', `${location.pathname}${location.search}`);
  return true;
}
