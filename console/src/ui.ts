// Pieces the pages share: the error box, loading state, figures, badges and budget meters.
import { ApiRequestError } from './api.js';
import { h, type Child } from './dom.js';
import { formatGpuHours, formatNumber, formatTime } from './format.js';
import { formQuery } from './router.js';

/** Asks the shell to sign out (the token was refused). */
export const SIGN_OUT_EVENT = 'gpucap:sign-out';

/** The API's error as it answered it: code, message, details and request_id. */
export function errorBox(error: unknown): HTMLElement {
  if (!(error instanceof ApiRequestError)) {
    return h('div', { class: 'error', role: 'alert' }, h('p', {}, h('strong', {}, 'Error: '), (error as Error).message ?? String(error)));
  }
  return h(
    'div',
    { class: 'error', role: 'alert' },
    h('p', {}, h('strong', {}, `${error.code}${error.status > 0 ? ` (HTTP ${error.status})` : ''}: `), error.message),
    error.details.length > 0 ? h('ul', {}, ...error.details.map((d) => h('li', {}, `${d.location} ${d.field}: ${d.message}`))) : null,
    error.requestId === undefined ? null : h('p', { class: 'muted' }, `request_id ${error.requestId}`),
    error.status === 401 ? h('p', {}, h('button', { type: 'button', onclick: () => document.dispatchEvent(new Event(SIGN_OUT_EVENT)) }, 'Sign in again')) : null,
  );
}

export function loading(what: string): HTMLElement {
  return h('p', { class: 'loading', role: 'status' }, `Loading ${what}…`);
}

/** Runs a section's loader, showing loading state, then its content or the API's error. */
export async function section(container: HTMLElement, what: string, load: () => Promise<Child>, signal: AbortSignal): Promise<void> {
  container.replaceChildren(loading(what));
  try {
    const content = await load();
    if (signal.aborted) return;
    container.replaceChildren();
    if (content !== null && content !== undefined && content !== false) container.append(...toNodes(content));
  } catch (error) {
    if (signal.aborted || (error as Error).name === 'AbortError') return;
    container.replaceChildren(errorBox(error));
  }
}

function toNodes(content: Child): Node[] {
  if (Array.isArray(content)) return (content as Child[]).flatMap(toNodes);
  if (content === null || content === undefined || content === false) return [];
  return [content instanceof Node ? content : document.createTextNode(String(content))];
}

/** Headline figures: label above value. */
export function tiles(entries: readonly (readonly [string, Child])[]): HTMLElement {
  return h('dl', { class: 'tiles' }, ...entries.map(([label, value]) => h('div', { class: 'tile' }, h('dt', {}, label), h('dd', {}, value))));
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge badge-${status}` }, status);
}

/** A bar of `value` out of `max`, as an ARIA meter: its label says the figures in words. */
export function meter(value: number, max: number, label: string, options: { over?: boolean } = {}): HTMLElement {
  const share = max > 0 ? Math.min(1, Math.max(0, value / max)) : value > 0 ? 1 : 0;
  const fill = h('span', { class: `meter-fill${options.over === true ? ' over' : ''}` });
  fill.style.width = `${(share * 100).toFixed(2)}%`;
  return h(
    'span',
    { class: 'meter', role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': Math.max(max, 0), 'aria-valuenow': Math.max(0, Math.min(value, Math.max(max, 0))), 'aria-label': label },
    fill,
  );
}

export interface BudgetFigures {
  allocated: number;
  used: number;
  remaining: number;
  burnRate: number;
  exhaustion: string | null;
  /** What the used GPU-hours cost, in words (`$580.84`); only for an organization with prices. */
  cost?: string;
}

/** One budget: name, bar, used/allocated, burn rate and projected exhaustion; then `note`, if any. */
export function budgetRow(name: string, budget: BudgetFigures, note?: Child): HTMLElement {
  const share = budget.allocated > 0 ? budget.used / budget.allocated : null;
  return h(
    'li',
    { class: 'budget' },
    h('div', { class: 'budget-head' }, h('span', { class: 'budget-name' }, name), h('span', {}, `${formatGpuHours(budget.used)} of ${formatNumber(budget.allocated)}${share === null ? '' : ` (${formatNumber(share * 100)} %)`}`)),
    meter(budget.used, budget.allocated, `${name}: ${formatNumber(budget.used)} of ${formatNumber(budget.allocated)} GPU-hours used`, { over: budget.remaining < 0 }),
    h(
      'div',
      { class: 'budget-foot muted' },
      h('span', {}, `${formatGpuHours(budget.remaining)} left`),
      budget.cost === undefined ? null : h('span', { class: 'budget-cost' }, `${budget.cost} spent`),
      h('span', {}, `burn ${formatNumber(budget.burnRate)} GPU-h/day`),
      h('span', {}, budget.exhaustion === null ? 'not projected to run out this period' : `runs out ${formatTime(budget.exhaustion)}`),
    ),
    note,
  );
}

export function link(href: string, ...children: Child[]): HTMLAnchorElement {
  return h('a', { href }, ...children);
}

export interface FiltersFormOptions {
  label: string;
  /** The page the form reloads, with its fields in the query string (Reset: without them). */
  path: string;
  /** Values left out of the URL, being the page's defaults. */
  defaults: Record<string, string>;
  go(url: string): void;
  /** Runs before the fields are read (to clear those that do not apply). */
  beforeApply?(): void;
}

/**
 * A page's filters: its fields, then Apply and Reset. Apply opens the page with the fields in the
 * URL, so the view can be shared; a cursor in the URL is dropped, as it belongs to the old filters.
 */
export function filtersForm(options: FiltersFormOptions, ...fields: Child[]): HTMLFormElement {
  const form = h(
    'form',
    { class: 'filters', 'aria-label': options.label, role: 'search' },
    ...fields,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('a', { href: options.path, class: 'button' }, 'Reset')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    options.beforeApply?.();
    options.go(`${options.path}${formQuery(form, options.defaults)}`);
  });
  return form;
}
