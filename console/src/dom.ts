// A small element builder: the console's pages are plain DOM, with no framework. Attributes go
// through setAttribute and text through text nodes, so nothing the API returns is parsed as HTML.

export type Child = Node | string | number | null | undefined | false | readonly Child[];
type AttributeValue = string | number | boolean | null | undefined;
export type Attributes = Record<string, AttributeValue | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') {
      element.addEventListener(name.slice(2).toLowerCase(), value);
    } else if (value === true) {
      element.setAttribute(name, '');
    } else if (value !== false && value !== null && value !== undefined) {
      element.setAttribute(name, String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child as readonly Child[]);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's content. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A select whose options are [value, label] pairs, with `selected` chosen. */
export function select(name: string, options: readonly (readonly [string, string])[], selected: string, attributes: Attributes = {}): HTMLSelectElement {
  return h('select', { name, id: `f-${name}`, ...attributes }, ...options.map(([value, label]) => h('option', { value, selected: value === selected }, label)));
}

/** A text input named `name` (id `f-<name>`, as select() names its own), holding `value`. */
export function textInput(name: string, value: string, placeholder?: string): HTMLInputElement {
  return h('input', { id: `f-${name}`, name, value, placeholder, autocomplete: 'off' });
}

/** A labelled form field. */
export function field(label: string, control: HTMLElement): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control);
}

/** A checkbox named `name` (id `f-<name>`) with its label beside it; checked, the form says `name=true`. */
export function checkbox(label: string, name: string, checked: boolean): HTMLElement {
  const id = `f-${name}`;
  return h('div', { class: 'field check' }, h('input', { type: 'checkbox', id, name, value: 'true', checked }), h('label', { for: id }, label));
}

/**
 * A table in a focusable scroll container (narrow screens scroll it sideways, by keyboard too). `foot`:
 * lines under the rows (totals), each headed by its first cell.
 */
export function table(
  caption: string,
  head: readonly string[],
  rows: readonly (readonly Child[])[],
  attributes: Attributes = {},
  foot: readonly (readonly Child[])[] = [],
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption },
    h(
      'table',
      attributes,
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, ...head.map((title) => h('th', { scope: 'col' }, title)))),
      h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
      foot.length === 0
        ? null
        : h('tfoot', {}, ...foot.map(([first, ...cells]) => h('tr', {}, h('th', { scope: 'row' }, first), ...cells.map((cell) => h('td', {}, cell))))),
    ),
  );
}
