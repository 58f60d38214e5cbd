// Conversions at the edges: the service keeps epoch milliseconds, the API speaks ISO 8601 UTC with Z.

export function toIso(ms: number): string;
export function toIso(ms: number | null): string | null;
export function toIso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * Parses a date (`2026-11-01`, taken as 00:00 UTC) or a date-time with an explicit offset.
 * Returns null for anything else, including dates that do not exist (`2026-02-30`).
 */
export function parseIsoInstant(text: string): number | null {
  if (DATE_ONLY.test(text)) {
    const ms = Date.parse(`${text}T00:00:00Z`);
    return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text ? null : ms;
  }
  if (!DATE_TIME.test(text)) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return null;
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  // Date.parse rolls 2026-02-30 over to March; reject the calendar date rather than guess.
  const probe = new Date(Date.UTC(y, m - 1, d));
  if (probe.getUTCMonth() !== m - 1 || probe.getUTCDate() !== d) return null;
  return ms;
}
