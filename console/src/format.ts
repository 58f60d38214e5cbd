// How figures read on screen. Times are shown in UTC, as the API's ranges and days are in UTC.

const number = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const precise = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

export function formatNumber(value: number | null | undefined, digits: 1 | 2 = 1): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return (digits === 2 ? precise : number).format(value);
}

export function formatGpuHours(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${formatNumber(value)} GPU-h`;
}

/** Money in its currency (`$1,234.56`), to the currency's own minor units as the API rounds it. */
export function formatMoney(value: number | null | undefined, currency: string): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  // Intl throws on a code that is not one: the figure alone, rather than a page that fails to draw.
  if (!/^[A-Z]{3}$/.test(currency)) return formatNumber(value, 2);
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
}

/** A cost in money; null is GPU time that no rate priced, which the API does not guess, and neither does the console. */
export function formatCost(value: number | null | undefined, currency: string): string {
  return value === null ? 'unpriced' : formatMoney(value, currency);
}

/** A share (0..1) as a percentage. */
export function formatShare(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${formatNumber(value * 100)} %`;
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  return `${minutes} min ${s % 60} s`;
}

/** `2026-11-28 14:05 UTC`. */
export function formatTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A day of a series (`2026-11-28`), or an hour (`11-28 14:00`). */
export function formatSeriesStart(iso: string, interval: string): string {
  if (interval === 'hour') return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
  return iso.slice(0, 10);
}

/** `gpu_utilization` → `GPU utilization`. */
export function humanize(key: string): string {
  const text = key.replace(/_/g, ' ').replace(/\bgpu\b/g, 'GPU').replace(/\bid\b/g, 'ID').replace(/\bkwh\b/g, 'kWh');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export const METRIC_UNITS: Record<string, string> = {
  gpu_utilization: '%',
  memory_utilization: '%',
  temperature: '°C',
  power_usage: 'W',
  gpu_usage: '%',
};

export function formatMetric(name: string, value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `${formatNumber(value)} ${METRIC_UNITS[name] ?? ''}`.trim();
}
