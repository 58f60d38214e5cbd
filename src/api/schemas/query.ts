// One query schema per endpoint: the validator, the TypeScript types of the handlers and the
// OpenAPI parameters all come from these. additionalProperties: false makes a typo a VALIDATION_ERROR.
import { Type, type Static } from '@sinclair/typebox';
import { METRIC_NAMES, METRICS_TIME_RANGES, RANKING_SORT_KEYS } from '../../domain/metrics.js';
import { PERCENTILES } from '../../domain/percentiles.js';
import { TREND_INTERVALS } from '../../domain/trend-interval.js';
import { WORKLOAD_STATUSES } from '../../domain/workload.js';
import { CHARGEBACK_GROUP_KEYS } from '../../query/chargeback.js';
import { CHARGEBACK_MONTH_PATTERN } from '../../query/chargeback-month.js';
import { EXACT_QUEUE_WAITS, STATS_GROUP_KEYS } from '../../query/ports.js';
import { STATS_TIME_RANGES } from '../../query/stats-range.js';
import { IdParam, InstantParam, StringEnum } from './primitives.js';

const strict = { additionalProperties: false } as const;

const metricName = `(${METRIC_NAMES.join('|')})`;
export const METRIC_LIST_PATTERN = `^${metricName}(,${metricName})*$`;
// Ascending, each at most once: each value may only be followed by larger ones, a regular language, so
// the pattern states the whole rule (no lookahead, which JSON Schema tools do not all support) and
// the OpenAPI document stays exactly what is accepted. `50,95,99`; not `99,50` nor `95,95`.
/** A list that starts at `p` (the i-th percentile): then each larger one at most once, in order. */
const startingAt = (p: number, i: number): string => `${p}${PERCENTILES.slice(i + 1).map((q) => `(,${q})?`).join('')}`;
export const PERCENTILE_LIST_PATTERN = `^(${PERCENTILES.map(startingAt).join('|')})$`;
// The cursor's own alphabet (base64url) and bound; what it encodes is checked when it is decoded.
export const NEXT_TOKEN_PATTERN = '^[A-Za-z0-9_-]{1,512}$';
const Status = StringEnum(WORKLOAD_STATUSES, { description: 'Workload status.' });

export const ListWorkloadsQuery = Type.Object(
  {
    organization_id: Type.Optional(IdParam('Must be the caller\'s organization (X-Organization-Id); any other is FORBIDDEN.')),
    initiative_id: Type.Optional(IdParam('Only workloads of this initiative (team). Outside the caller\'s teams: FORBIDDEN.')),
    status: Type.Optional(Status),
    submitted_by: Type.Optional(IdParam('Only workloads submitted by this user.')),
    is_managed: Type.Optional(Type.Boolean({ description: '`true` or `false`.' })),
    start_date: Type.Optional(InstantParam('Submitted at or after this instant (inclusive).')),
    end_date: Type.Optional(InstantParam('Submitted before this instant (exclusive); must be after start_date.')),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size.' }),
    next_token: Type.Optional(
      Type.String({
        pattern: NEXT_TOKEN_PATTERN,
        description:
          'Opaque, issued by the service: metadata.next_token of the previous page, sent back unchanged with the same filters. ' +
          'A token the service did not issue, or one sent with other filters, is VALIDATION_ERROR.',
      }),
    ),
  },
  strict,
);
export type ListWorkloadsQuery = Static<typeof ListWorkloadsQuery>;

export const WorkloadStatsQuery = Type.Object(
  {
    time_range: Type.Optional(
      StringEnum(STATS_TIME_RANGES, { description: 'Default `last_30_days`. Calendar ranges start at 00:00 UTC (weeks on Monday).' }),
    ),
    start_date: Type.Optional(
      InstantParam('Start of a `custom` range (inclusive); required with `custom`, refused with other ranges. ' +
        'At most retention_days (default 400) before end_date, or before now without end_date.'),
    ),
    end_date: Type.Optional(
      InstantParam('End of a `custom` range (exclusive), after start_date; default now ' +
        '(start_date must then not be in the future); refused with other ranges.'),
    ),
    group_by: Type.Optional(StringEnum(STATS_GROUP_KEYS, { description: 'Fill `grouped`; omitted: `grouped` is `[]`.' })),
    initiative_id: Type.Optional(IdParam('Only this initiative.')),
    interval: Type.Optional(
      StringEnum(TREND_INTERVALS, {
        description: 'Addition: adds `series`, the figures per UTC hour, day or ISO week (from Monday) of ' +
          'submission; per group with group_by. At most 744 hours (31 days), 1,000 days or 1,000 weeks.',
      }),
    ),
    queue_percentiles: Type.Optional(
      Type.String({
        pattern: PERCENTILE_LIST_PATTERN,
        description:
          `Addition: comma-separated percentiles, ascending, each once, no spaces (of ${PERCENTILES.join(', ')}): ` +
          'adds `pNN_queue_seconds` to the summary and each group, ' +
          'the exact nearest-rank percentile of the workloads\' queue_seconds, read from every workload of the range ' +
          `(docs/api.md gives its cost); over more than ${EXACT_QUEUE_WAITS.toLocaleString('en-US')} workloads, ` +
          'from wait buckets, less than 1/128 below the exact value. ' +
          'Omitted: none.',
      }),
    ),
  },
  strict,
);
export type WorkloadStatsQuery = Static<typeof WorkloadStatsQuery>;

export const WorkloadMetricsQuery = Type.Object(
  {
    time_range: StringEnum(METRICS_TIME_RANGES, {
      default: 'last_1h',
      description: '`job_lifetime` spans started_at to completed_at (or now).',
    }),
    metrics: Type.Optional(
      Type.String({
        pattern: METRIC_LIST_PATTERN,
        maxLength: 200,
        description: `Comma-separated metric names, no spaces (${METRIC_NAMES.join(', ')}); omitted: all five.`,
      }),
    ),
    percentiles: Type.Optional(
      Type.String({
        pattern: PERCENTILE_LIST_PATTERN,
        description:
          `Comma-separated percentiles, ascending, each once, no spaces (of ${PERCENTILES.join(', ')}): adds \`pNN\` to each metric, ` +
          'the nearest-rank percentile over the samples of the range: exact where the range reads every sample (last_1h), ' +
          'else from bucket means, within the bound docs/api.md states. ' +
          'Omitted: no percentiles.',
      }),
    ),
  },
  strict,
);
export type WorkloadMetricsQuery = Static<typeof WorkloadMetricsQuery>;

export const RankingQuery = Type.Object(
  {
    sort_by: StringEnum(RANKING_SORT_KEYS, {
      default: 'gpu_utilization',
      description: 'Metrics rank by their last-hour average; `gpu_hours` by total; `queue_seconds` ' +
        '(an addition) by the wait from submission to start, pending ones up to now; `cost` (an addition, with prices only) ' +
        'by what each workload\'s GPU time cost, workloads that no rate priced left out.',
    }),
    order: StringEnum(['asc', 'desc'] as const, { default: 'desc' }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 10, description: 'Number of entries.' }),
    initiative_id: Type.Optional(IdParam('Only this initiative.')),
    status: Type.Optional(Status),
  },
  strict,
);
export type RankingQuery = Static<typeof RankingQuery>;

export const CapacityQuery = Type.Object(
  {
    initiative_id: Type.Optional(IdParam('Only this initiative (narrows summary and initiatives).')),
    pool_id: Type.Optional(IdParam('Only this capacity pool (narrows pools); a pool the budget does not name gives an empty pools list.')),
  },
  strict,
);
export type CapacityQuery = Static<typeof CapacityQuery>;

export const ChargebackQuery = Type.Object(
  {
    month: Type.String({
      pattern: CHARGEBACK_MONTH_PATTERN,
      description: 'Required: the UTC month, `YYYY-MM` (1970 to 2099); not after the current month, which is billed up to now ' +
        '(`complete: false`).',
    }),
    group_by: Type.Optional(StringEnum(CHARGEBACK_GROUP_KEYS, {
      description: 'A row per team and value of this key (a pool is the one whose instance types hold the GPU time); ' +
        'omitted: a row per team.',
    })),
    share_idle: Type.Boolean({
      default: false,
      description: 'Spread the unallocated GPU-hours\' cost over the rows, in proportion to their cost.',
    }),
  },
  strict,
);
export type ChargebackQuery = Static<typeof ChargebackQuery>;

export const NoQuery = Type.Object({}, strict);
