// How numbers read in a table: GPU-hours to one decimal with their unit, shares as percentages,
// durations and ages as kubectl writes them (45s, 12m, 3h5m, 2d4h), and "-" where there is nothing.
const NONE = '-';

const missing = (value: unknown): value is null | undefined => value === null || value === undefined;

export const gpuHours = (value: number | null | undefined): string => (missing(value) ? NONE : `${value.toFixed(1)} GPU-h`);
export const percent = (value: number | null | undefined, digits = 1): string => (missing(value) ? NONE : `${value.toFixed(digits)} %`);
export const share = (value: number | null | undefined): string => (missing(value) ? NONE : percent(value * 100, 0));
export const watts = (value: number | null | undefined): string => (missing(value) ? NONE : `${value.toFixed(0)} W`);
export const celsius = (value: number | null | undefined): string => (missing(value) ? NONE : `${value.toFixed(0)} °C`);
export const kwh = (value: number | null | undefined): string => (missing(value) ? NONE : `${value.toFixed(2)} kWh`);
/**
 * Money in its ISO 4217 currency, to the currency's minor units as the API rounds it (`12.34 USD`,
 * `1234 JPY`); "-" where there is none.
 */
export function money(value: number | null | undefined, currency: string): string {
  const figure = amount(value, currency);
  return figure === NONE || !/^[A-Z]{3}$/.test(currency) ? figure : `${figure} ${currency}`;
}
/** Money to the currency's minor units without its code (`12.34`), for a column whose header names the currency. */
export function amount(value: number | null | undefined, currency: string): string {
  if (missing(value)) return NONE;
  if (!/^[A-Z]{3}$/.test(currency)) return String(value);
  const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return value.toFixed(digits);
}
export const text = (value: string | number | boolean | null | undefined): string =>
  missing(value) || value === '' ? NONE : String(value);

/** A duration in whole seconds, in its two largest units. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return NONE;
  const s = Math.max(0, Math.floor(seconds));
  const parts: [number, string][] = [
    [Math.floor(s / 86_400), 'd'],
    [Math.floor((s % 86_400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'm'],
    [s % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  if (first < 0) return '0s';
  return parts.slice(first, first + 2).filter(([n], i) => i === 0 || n > 0).map(([n, u]) => `${n}${u}`).join('');
}

/** The time since an ISO instant, as kubectl's AGE column. */
export function age(iso: string | null | undefined, now: number): string {
  if (!iso) return NONE;
  return duration((now - Date.parse(iso)) / 1000);
}
