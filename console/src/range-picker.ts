// The statistics' ranges as form fields: a range, and From / Before dates that show with `custom`
// only. Pages that read a range (Statistics, Fleet) share it, so a range reads the same on both.
import { STATS_TIME_RANGES } from './contract.js';
import { field, h, select, textInput, type Child } from './dom.js';
import { humanize } from './format.js';

export interface RangePicker {
  fields: Child[];
  /** Empties the custom dates unless the custom range is chosen: the API refuses them with any other. */
  clearUnusedDates(): void;
}

export function rangePicker(query: URLSearchParams, defaultRange: string): RangePicker {
  const value = (name: string) => query.get(name) ?? '';
  const range = value('time_range') || defaultRange;
  const custom = h(
    'div',
    { class: 'custom-range' },
    field('From', textInput('start_date', value('start_date'), '2026-11-01')),
    field('Before', textInput('end_date', value('end_date'), 'now')),
  );
  custom.hidden = range !== 'custom';
  const rangeSelect = select('time_range', STATS_TIME_RANGES.map((r) => [r, humanize(r)] as const), range);
  rangeSelect.addEventListener('change', () => {
    custom.hidden = rangeSelect.value !== 'custom';
  });
  return {
    fields: [field('Range', rangeSelect), custom],
    clearUnusedDates: () => {
      if (rangeSelect.value !== 'custom') for (const input of custom.querySelectorAll('input')) input.value = '';
    },
  };
}
