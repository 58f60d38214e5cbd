// The pages for organization admins only (Fleet, Chargeback). The console cannot tell a token's role
// before the API answers (an API token says nothing of it), so every caller sees these pages in the
// navigation, and one the API refuses learns why in words, above the API's own error.
import { ApiRequestError } from './api.js';
import { h, type Child } from './dom.js';
import { errorBox } from './ui.js';

/** `load`'s view; a FORBIDDEN (403) of the API instead says that `what` is for ORG_ADMIN only, `because`. */
export async function adminOnly(what: string, because: string, load: () => Promise<Child[]>): Promise<Child[]> {
  try {
    return await load();
  } catch (error) {
    if (!(error instanceof ApiRequestError) || error.status !== 403) throw error;
    return [
      h('p', { class: 'notice' }, `${what} is shown to organization admins (ORG_ADMIN) only: ${because}. `, 'Sign in with an ORG_ADMIN token to see it.'),
      errorBox(error),
    ];
  }
}
