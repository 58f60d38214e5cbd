// Chargeback: a UTC month's statement for finance (GET /v1/chargeback), ORG_ADMIN only: each team's
// GPU time inside the month and its cost, the idle, unallocated and total lines, and the same
// statement as the CSV file the service names. The month (the current one by default), the split
// and whether the unallocated cost is shared are in the URL, as on every page.
import { adminOnly } from '../admin-only.js';
import { apiGet } from '../api.js';
import { CHARGEBACK_GROUP_KEYS, type Chargeback } from '../contract.js';
import { checkbox, field, h, select } from '../dom.js';
import { downloadCsv } from '../download.js';
import { humanize } from '../format.js';
import { pick, type PageContext } from '../router.js';
import type { Session } from '../session.js';
import { errorBox, filtersForm, section } from '../ui.js';
import { statementView } from './chargeback-statement.js';

const PARAMETERS = ['month', 'group_by', 'share_idle'] as const;

/** The current month in UTC (`2026-12`), as the API counts months. */
function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

export async function chargebackPage(main: HTMLElement, context: PageContext): Promise<void> {
  context.title(`Chargeback of ${context.session.organizationId}`);
  const { query } = context;
  const defaults = { month: currentMonth() };
  const month = h('input', { type: 'month', id: 'f-month', name: 'month', value: query.get('month') || defaults.month, max: defaults.month, required: true });
  const splits = [['', 'nothing'], ...CHARGEBACK_GROUP_KEYS.map((k) => [k, humanize(k)] as const)] as const;
  const form = filtersForm(
    { label: 'Month and lines', path: '/chargeback', defaults, go: context.go },
    field('Month (UTC)', month),
    field('Split each team by', select('group_by', splits, query.get('group_by') ?? '')),
    checkbox('Share the unallocated cost over the rows', 'share_idle', query.get('share_idle') === 'true'),
  );
  const results = h('div', { class: 'results' });
  main.append(form, results);
  // The URL's values go to the API as they are: a wrong one shows the API's own VALIDATION_ERROR.
  const params = pick(query, PARAMETERS, defaults);
  await section(
    results,
    'the chargeback',
    () => adminOnly('The chargeback (every team\'s GPU time and cost in a month)', 'it bills every team', async () => {
      const statement = (await apiGet<Chargeback>(context.session, '/chargeback', params, context.signal)).data;
      return [
        h('h2', {}, `Statement for ${statement.month}`),
        downloadBar(context.session, params, `chargeback-${statement.month}.csv`),
        statementView(statement),
      ];
    }),
    context.signal,
  );
}

/** Download CSV: the statement of the page's own URL (not of fields changed since), under the service's file name. */
function downloadBar(session: Session, params: Record<string, string | undefined>, fallbackName: string): HTMLElement {
  const outcome = h('div', { class: 'muted', 'aria-live': 'polite' });
  const button = h('button', { type: 'button' }, 'Download CSV');
  button.addEventListener('click', () => {
    button.disabled = true;
    outcome.replaceChildren('Downloading…');
    downloadCsv(session, '/chargeback', params, fallbackName)
      .then((name) => outcome.replaceChildren(`Saved as ${name}`), (error: unknown) => outcome.replaceChildren(errorBox(error)))
      .finally(() => {
        button.disabled = false;
      });
  });
  return h('div', { class: 'download' }, button, outcome);
}
