// Workloads: the list with every filter of GET /v1/workloads, and keyset paging. The filters and the
// page's cursor are in the URL, so a filtered page can be shared and the browser's Back goes to the
// previous page.
import { apiGet } from '../api.js';
import { LIST_LIMITS, WORKLOAD_STATUSES, type WorkloadListItem } from '../contract.js';
import { field, h, select, table, textInput } from '../dom.js';
import { formatTime } from '../format.js';
import { pick, withCursor, type PageContext } from '../router.js';
import { filtersForm, link, section, statusBadge } from '../ui.js';

const FILTERS = ['organization_id', 'initiative_id', 'status', 'submitted_by', 'is_managed', 'start_date', 'end_date', 'limit'] as const;
const DEFAULTS = { limit: '20' };

export async function workloadsPage(main: HTMLElement, context: PageContext): Promise<void> {
  context.title('Workloads');
  const { query } = context;
  const value = (name: string) => query.get(name) ?? '';
  const form = filtersForm(
    { label: 'Filters', path: '/workloads', defaults: DEFAULTS, go: context.go },
    field('Status', select('status', [['', 'any'], ...WORKLOAD_STATUSES.map((s) => [s, s] as const)], value('status'))),
    field('Team (initiative)', textInput('initiative_id', value('initiative_id'))),
    field('Submitted by', textInput('submitted_by', value('submitted_by'))),
    field('Managed', select('is_managed', [['', 'any'], ['true', 'managed'], ['false', 'not managed']], value('is_managed'))),
    field('Submitted from', textInput('start_date', value('start_date'), '2026-11-01')),
    field('Submitted before', textInput('end_date', value('end_date'), '2026-11-28T12:00:00Z')),
    field('Organization', textInput('organization_id', value('organization_id'), context.session.organizationId)),
    field('Per page', select('limit', LIST_LIMITS.map((n) => [String(n), String(n)] as const), value('limit') || DEFAULTS.limit)),
  );
  const results = h('div', { class: 'results' });
  main.append(form, results);
  await section(
    results,
    'workloads',
    async () => {
      const answer = await apiGet<{ workloads: WorkloadListItem[] }>(context.session, '/workloads', { ...pick(query, FILTERS, DEFAULTS), next_token: query.get('next_token') ?? undefined }, context.signal);
      const rows = answer.data.workloads;
      const total = answer.metadata?.total_count ?? rows.length;
      const next = answer.metadata?.next_token;
      return [
        table(
          `${total} workload${total === 1 ? '' : 's'} match${total === 1 ? 'es' : ''}${query.has('next_token') ? ' (a later page)' : ''}`,
          ['Name', 'Status', 'Team', 'Submitted by', 'GPUs', 'Instance type', 'Submitted', 'Started'],
          rows.map((w) => [
            link(`/workloads/${encodeURIComponent(w.workload_id)}`, w.name),
            statusBadge(w.status),
            w.initiative_id,
            w.submitted_by,
            w.gpu_count,
            w.instance_type,
            formatTime(w.submitted_at),
            formatTime(w.started_at),
          ]),
          { class: 'workloads', 'data-rows': rows.length },
        ),
        h(
          'nav',
          { class: 'pager', 'aria-label': 'Pages' },
          query.has('next_token') ? link(`/workloads${withCursor(query, undefined)}`, 'First page') : null,
          next === undefined ? h('span', { class: 'muted' }, 'Last page') : link(`/workloads${withCursor(query, next)}`, 'Next page'),
        ),
      ];
    },
    context.signal,
  );
}
