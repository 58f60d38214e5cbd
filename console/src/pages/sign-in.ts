// Sign-in: a bearer token (a JWT of the identity provider, or an API token) and the organization it
// acts for. Both stay in this tab's sessionStorage until Sign out or the tab closes.
import { field, h } from '../dom.js';
import { saveSession } from '../session.js';

export function signInPage(main: HTMLElement, onSignedIn: () => void, message?: string): void {
  document.title = 'Sign in · gpu-capacity-api';
  const token = h('input', { id: 'sign-in-token', name: 'token', type: 'password', required: true, autocomplete: 'off', spellcheck: 'false' });
  const organization = h('input', { id: 'sign-in-org', name: 'organization', required: true, autocomplete: 'organization', placeholder: 'acme' });
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title', tabindex: -1 }, 'Sign in'),
    h(
      'p',
      { class: 'muted' },
      'Paste a token the service accepts: a JWT from your identity provider or an API token. The console sends it only to this service\'s /v1 API, and keeps it in this tab until you sign out or close the tab.',
    ),
    message === undefined ? null : h('p', { class: 'notice', role: 'status' }, message),
    field('Bearer token', token),
    field('Organization ID (X-Organization-Id)', organization),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Sign in')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    saveSession({ token: token.value.trim(), organizationId: organization.value.trim() });
    onSignedIn();
  });
  main.replaceChildren(form);
  token.focus();
}
