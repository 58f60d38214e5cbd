// Rankings: the top workloads by each sort key of GET /v1/workloads/metrics, against the average of
// everything in the caller's scope.
import { apiGet } from '../api.js';
import { RANKING_SORT_KEYS, WORKLOAD_STATUSES, type RankedValue, type RankedWorkloads, type RankingSortKey } from '../contract.js';
import { field, h, select, table, textInput } from '../dom.js';
import { formatDuration, formatGpuHours, formatMetric, formatShare, humanize } from '../format.js';
import { pick, type PageContext } from '../router.js';
import { filtersForm, link, meter, section, tiles } from '../ui.js';

const FILTERS = ['sort_by', 'order', 'limit', 'initiative_id', 'status'] as const;
const DEFAULTS = { sort_by: 'gpu_utilization', order: 'desc', limit: '10' };

export async function rankingsPage(main: HTMLElement, context: PageContext): Promise<void> {
  context.title('Rankings');
  const { query } = context;
  const value = (name: string) => query.get(name) ?? '';
  const sortBy = (RANKING_SORT_KEYS as readonly string[]).includes(value('sort_by')) ? (value('sort_by') as RankingSortKey) : 'gpu_utilization';
  const keys = h(
    'nav',
    { class: 'tabs', 'aria-label': 'Rank by' },
    ...RANKING_SORT_KEYS.map((key) => {
      const params = new URLSearchParams(query);
      params.set('sort_by', key);
      return h('a', { href: `/rankings?${params}`, ...(key === sortBy ? { 'aria-current': 'page' } : {}) }, humanize(key));
    }),
  );
  const form = filtersForm(
    { label: 'Filters', path: '/rankings', defaults: DEFAULTS, go: context.go },
    field('Rank by', select('sort_by', RANKING_SORT_KEYS.map((k) => [k, humanize(k)] as const), sortBy)),
    field('Order', select('order', [['desc', 'highest first'], ['asc', 'lowest first']], value('order') || DEFAULTS.order)),
    field('Entries', select('limit', ['5', '10', '20', '50', '100'].map((n) => [n, n] as const), value('limit') || DEFAULTS.limit)),
    field('Team (initiative)', textInput('initiative_id', value('initiative_id'))),
    field('Status', select('status', [['', 'any'], ...WORKLOAD_STATUSES.map((s) => [s, s] as const)], value('status'))),
  );
  const results = h('div', { class: 'results' });
  main.append(keys, form, results);
  await section(
    results,
    'the ranking',
    async () => {
      const ranking = (await apiGet<RankedWorkloads>(context.session, '/workloads/metrics', pick(query, FILTERS, DEFAULTS), context.signal)).data;
      const average = ranking.scope_average[sortBy] ?? null;
      const values = ranking.workloads.map((w) => rankedNumber(w[sortBy] as RankedValue | undefined));
      const top = Math.max(average ?? 0, ...values.map((v) => v ?? 0));
      return [
        tiles([[`Scope average of ${humanize(sortBy)}`, formatKey(sortBy, average)]]),
        table(
          `Workloads ranked by ${humanize(sortBy)}${sortBy in LAST_HOUR ? ' (last-hour average)' : ''}`,
          ['#', 'Name', 'Team', humanize(sortBy), 'Against the top', ...(sortBy in LAST_HOUR ? ['Current'] : []), ...(COVERED.has(sortBy) ? ['Coverage'] : [])],
          ranking.workloads.map((w, i) => {
            const ranked = w[sortBy] as RankedValue | undefined;
            const number = values[i] ?? null;
            return [
              String(i + 1),
              link(`/workloads/${encodeURIComponent(w.workload_id)}`, w.name),
              w.initiative_id,
              formatKey(sortBy, number),
              meter(number ?? 0, top, `${w.name}: ${formatKey(sortBy, number)}`),
              ...(sortBy in LAST_HOUR ? [formatKey(sortBy, ranked !== undefined && 'current' in ranked ? ranked.current : null)] : []),
              ...(COVERED.has(sortBy) ? [formatShare(ranked !== undefined && 'coverage' in ranked ? ranked.coverage : null)] : []),
            ];
          }),
          { class: 'ranking', 'data-rows': ranking.workloads.length },
        ),
      ];
    },
    context.signal,
  );
}

const LAST_HOUR = { gpu_utilization: true, memory_utilization: true, power_usage: true };
const COVERED = new Set<RankingSortKey>(['idle_gpu_hours', 'gpu_efficiency']);

function rankedNumber(value: RankedValue | undefined): number | null {
  if (value === undefined) return null;
  if ('avg' in value) return value.avg;
  if ('value' in value) return value.value;
  return value.total;
}

function formatKey(key: RankingSortKey, value: number | null): string {
  if (key === 'gpu_hours' || key === 'idle_gpu_hours') return formatGpuHours(value);
  if (key === 'gpu_efficiency') return formatShare(value);
  if (key === 'queue_seconds') return formatDuration(value);
  return formatMetric(key, value);
}
