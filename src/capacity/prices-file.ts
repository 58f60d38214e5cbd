// Parses one `prices.yaml` (the key of a prices ConfigMap) into a PriceTable. Every problem is
// collected and reported at once, each naming its path in the file (`gpu_hour_rates[2].effective_to`);
// the ConfigMap source logs it and keeps the last valid table in force.
import { HOUR_MS } from '../domain/trend-interval.js';
import { PRICE_MATCH_FIELDS, specificity, type GpuHourRate, type PriceMatch, type PriceTable } from '../domain/price-table.js';
import { quote, readYamlMapping, rejectFile, schemaChecker, type YamlFileKind } from './yaml-file.js';
import { CAPACITY_PATTERN_WORDS } from './capacity-schema.js';
import { CURRENCY_PATTERN, INSTANT_PATTERN, PricesFileSchema, type PricesFile } from './prices-schema.js';

export class PricesFileError extends Error {
  readonly code = 'PRICES_INVALID';
  readonly source: string;
  readonly problems: string[];

  constructor(source: string, problems: string[]) {
    super(`Cannot parse prices.yaml of ${source}: ${problems.join('; ')}`);
    this.name = 'PricesFileError';
    this.source = source;
    this.problems = problems;
  }
}

const PRICES_FILE: YamlFileKind = {
  emptyHint: 'a mapping with at least organization_id, currency and gpu_hour_rates',
  firstKey: 'organization_id',
  invalid: (source, problems) => new PricesFileError(source, problems),
};

const schemaProblems = schemaChecker(PricesFileSchema, {
  [CURRENCY_PATTERN]: 'an ISO 4217 code: three capital letters such as "USD"',
  [INSTANT_PATTERN]: 'a UTC time such as "2026-10-01T00:00:00Z" or a date such as "2026-10-01"',
  ...CAPACITY_PATTERN_WORDS,
});

const FILE_NAMES: Readonly<Record<keyof PriceMatch, string>> = {
  gpuModel: 'gpu_model', instanceType: 'instance_type', poolId: 'pool_id', clusterId: 'cluster_id', capacityType: 'capacity_type',
};

const KNOWN_CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function parsePricesFile(text: string, source: string): PriceTable {
  const file = readYamlMapping(text, source, PRICES_FILE);
  const problems = schemaProblems(file);
  if (problems.length > 0) rejectFile(PRICES_FILE, source, problems);
  const valid = file as PricesFile;
  const rates: GpuHourRate[] = [];
  if (!KNOWN_CURRENCIES.has(valid.currency)) problems.push(`"currency" must be an ISO 4217 currency code, got ${quote(valid.currency)}`);
  valid.gpu_hour_rates.forEach((rate, index) => {
    const path = `gpu_hour_rates[${index}]`;
    const from = instant(rate.effective_from, `${path}.effective_from`, problems);
    const to = rate.effective_to === undefined ? null : instant(rate.effective_to, `${path}.effective_to`, problems);
    if (from === undefined || to === undefined) return;
    if (to !== null && to <= from) {
      problems.push(`"${path}.effective_to" must be after effective_from (${rate.effective_from}), got ${quote(rate.effective_to)}`);
      return;
    }
    rates.push({ index, match: matchOf(rate), ratePerGpuHour: rate.rate_per_gpu_hour, effectiveFrom: from, effectiveTo: to });
  });
  problems.push(...tieProblems(rates));
  if (problems.length > 0) rejectFile(PRICES_FILE, source, problems);
  return {
    organizationId: valid.organization_id,
    currency: valid.currency,
    minorUnits: minorUnitsOf(valid.currency),
    gpuHourRates: rates,
    energyRatePerKwh: valid.energy_rate_per_kwh ?? null,
  };
}

/** Epoch ms of a time of the file, which must be a whole UTC hour; undefined (with a problem) otherwise. */
function instant(text: string, path: string, problems: string[]): number | undefined {
  const ms = Date.parse(/T/.test(text) ? text : `${text}T00:00:00Z`);
  if (!Number.isFinite(ms)) {
    problems.push(`"${path}" is not a valid time, got ${quote(text)}`);
    return undefined;
  }
  // Costs over time are summed per hour of use (the fleet's ledger, the usage rollups): a rate that
  // changed inside an hour could not be told apart within it.
  if (ms % HOUR_MS !== 0) {
    problems.push(`"${path}" must be a whole UTC hour (minutes and seconds 0 in UTC), got ${quote(text)}`);
    return undefined;
  }
  return ms;
}

function matchOf(rate: PricesFile['gpu_hour_rates'][number]): PriceMatch {
  const match: PriceMatch = {};
  if (rate.gpu_model !== undefined) match.gpuModel = rate.gpu_model;
  if (rate.instance_type !== undefined) match.instanceType = rate.instance_type;
  if (rate.pool_id !== undefined) match.poolId = rate.pool_id;
  if (rate.cluster_id !== undefined) match.clusterId = rate.cluster_id;
  if (rate.capacity_type !== undefined) match.capacityType = rate.capacity_type;
  return match;
}

/**
 * Two rates tie when they name as many fields, no field they both name differs (so one GPU can match
 * both: `gpu_model` and `capacity_type` alone can), and their times overlap. Which should win is the
 * operator's to say, by naming one more field or ending one rate before the other begins.
 */
function tieProblems(rates: readonly GpuHourRate[]): string[] {
  const problems: string[] = [];
  for (let j = 0; j < rates.length; j += 1) {
    for (let i = 0; i < j; i += 1) {
      const a = rates[i] as GpuHourRate;
      const b = rates[j] as GpuHourRate;
      const weight = specificity(a.match);
      if (weight !== specificity(b.match)) continue;
      const apart = PRICE_MATCH_FIELDS.some((f) => a.match[f] !== undefined && b.match[f] !== undefined && a.match[f] !== b.match[f]);
      if (apart) continue;
      const from = Math.max(a.effectiveFrom, b.effectiveFrom);
      const to = Math.min(a.effectiveTo ?? Infinity, b.effectiveTo ?? Infinity);
      if (from >= to) continue;
      const fields = PRICE_MATCH_FIELDS
        .filter((field) => a.match[field] !== undefined || b.match[field] !== undefined)
        .map((field) => FILE_NAMES[field]);
      const named = weight === 0 ? 'name no field' : `name ${weight} field${weight === 1 ? '' : 's'}`;
      problems.push(
        `"gpu_hour_rates[${b.index}]" ties with gpu_hour_rates[${a.index}]: both ${named}` +
          `${fields.length > 0 ? ` (${fields.join(', ')})` : ''} and can match the same GPU from ${iso(from)}` +
          `${to === Infinity ? ' on' : ` to ${iso(to)}`}; name one more field in one of them, or end one before the other begins`,
      );
    }
  }
  return problems;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The currency's minor units as ICU knows them (2 for USD, 0 for JPY, 3 for BHD). */
export function minorUnitsOf(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}
