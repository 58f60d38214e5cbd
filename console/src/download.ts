// Saving one of the API's CSV answers as a file. A plain link cannot carry the token (it lives in the
// Authorization header only), so the console fetches the file itself and hands the browser a blob
// under the name the service gave it in Content-Disposition.
import { apiFetch, type QueryValues } from './api.js';
import { filenameOf } from './content-disposition.js';
import { h } from './dom.js';
import type { Session } from './session.js';

/** How long the blob outlives the click: the browser reads it after the click has returned. */
const BLOB_LIFETIME_MS = 60_000;

/** Downloads the CSV form of `path` with `query`; the file's name. */
export async function downloadCsv(session: Session, path: string, query: QueryValues, fallbackName: string): Promise<string> {
  const response = await apiFetch(session, path, query, 'text/csv');
  const name = filenameOf(response.headers.get('Content-Disposition')) ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const anchor = h('a', { href: url, download: name, hidden: true });
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), BLOB_LIFETIME_MS);
  return name;
}
