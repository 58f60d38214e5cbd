// Fleet: the GPUs of the organization's clusters (GET /v1/fleet by GPU model, GET /v1/fleet/nodes),
// for ORG_ADMIN only: the GPUs now, their GPU-hours over a range by state, and the nodes page by page.
// The range, the filters and the nodes' cursor are in the URL, as on every page.
import { adminOnly } from '../admin-only.js';
import { apiGet } from '../api.js';
import { FLEET_NODE_STATES, LIST_LIMITS, TREND_INTERVALS, type Fleet, type FleetNode } from '../contract.js';
import { field, h, select, textInput, type Child } from '../dom.js';
import { rangePicker } from '../range-picker.js';
import { pick, type PageContext } from '../router.js';
import { filtersForm, section } from '../ui.js';
import { fleetHistoryView } from './fleet-history.js';
import { nodesView, nodeStateLabel } from './fleet-nodes.js';
import { fleetNowView } from './fleet-now.js';

const RANGE = ['time_range', 'start_date', 'end_date'] as const;
const FILTERS = ['cluster_id', 'gpu_model', 'pool_id'] as const;
const DEFAULTS = { time_range: 'last_30_days', limit: '50' };
const HOUR_MS = 3_600_000;
// Up to this long a range is charted per hour unless the URL says otherwise; longer ones per day.
const HOURLY_UP_TO_MS = 48 * HOUR_MS;

export async function fleetPage(main: HTMLElement, context: PageContext): Promise<void> {
  context.title(`Fleet of ${context.session.organizationId}`);
  const { query } = context;
  const value = (name: string) => query.get(name) ?? '';
  const interval = chartInterval(query);
  const range = rangePicker(query, DEFAULTS.time_range);
  const form = filtersForm(
    { label: 'Range and nodes', path: '/fleet', defaults: DEFAULTS, go: context.go, beforeApply: range.clearUnusedDates },
    ...range.fields,
    // Automatic: per hour for today and custom ranges up to 2 days (a day per bar would be one bar), else per day.
    field('Per', select('interval', [['', 'automatic'], ...TREND_INTERVALS.map((i) => [i, i] as const)], value('interval'))),
    field('Cluster', textInput('cluster_id', value('cluster_id'))),
    field('GPU model', textInput('gpu_model', value('gpu_model'))),
    field('Pool', textInput('pool_id', value('pool_id'))),
    field('Node state', select('state', [['', 'any'], ...FLEET_NODE_STATES.map((s) => [s, nodeStateLabel(s)] as const)], value('state'))),
    field('Nodes per page', select('limit', LIST_LIMITS.map((n) => [String(n), String(n)] as const), value('limit') || DEFAULTS.limit)),
  );
  const results = h('div', { class: 'results' });
  main.append(form, results);
  await section(
    results,
    'the fleet',
    () => adminOnly(
      'The fleet (every GPU node of the organization\'s clusters, and what it holds)',
      'nodes are shared by every team',
      async () => {
        const filters = pick(query, FILTERS);
        const [fleet, nodes] = await Promise.all([
          apiGet<Fleet>(
            context.session,
            '/fleet',
            { ...pick(query, RANGE, DEFAULTS), ...filters, interval, group_by: 'gpu_model' },
            context.signal,
          ),
          apiGet<{ nodes: FleetNode[] }>(
            context.session,
            '/fleet/nodes',
            { ...filters, state: value('state'), limit: value('limit') || DEFAULTS.limit, next_token: value('next_token') },
            context.signal,
          ),
        ]);
        return [
          titled('now', 'GPUs now', fleetNowView(fleet.data)),
          titled('hours', 'GPU-hours over the range', fleetHistoryView(fleet.data, interval)),
          titled('nodes', 'Nodes', nodesView(nodes.data.nodes, nodes.metadata, query)),
        ];
      },
    ),
    context.signal,
  );
}

/** A section under its h2, which names it for assistive technology. */
function titled(id: string, title: string, content: Child[]): HTMLElement {
  return h('section', { 'aria-labelledby': `${id}-title` }, h('h2', { id: `${id}-title` }, title), content);
}

/** The interval of the URL, else per hour for a range of up to 2 days, else per day. */
function chartInterval(query: URLSearchParams): string {
  const asked = query.get('interval') ?? '';
  if ((TREND_INTERVALS as readonly string[]).includes(asked)) return asked;
  const range = query.get('time_range') || DEFAULTS.time_range;
  if (range === 'today') return 'hour';
  if (range !== 'custom') return 'day';
  const start = Date.parse(query.get('start_date') ?? '');
  const end = query.get('end_date') ? Date.parse(query.get('end_date') ?? '') : Date.now();
  return end - start <= HOURLY_UP_TO_MS ? 'hour' : 'day';
}
