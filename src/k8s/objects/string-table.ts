// One copy of each value that many cached objects share: namespaces, node names, phases, label values.
// JSON.parse makes a new string for every occurrence, so 150k pods in 40 namespaces would otherwise
// hold 150k copies of the namespace names. Only values with few distinct strings belong here. The
// table keeps what it was given for as long as it lives, so it stops taking new values at a bound: a
// label that is unique per object (a misuse) then costs what it did before, not a leak.
const DEFAULT_MAX_STRINGS = 65_536;

export class StringTable {
  readonly #strings = new Map<string, string>();
  readonly #max: number;

  constructor(options: { maxStrings?: number } = {}) {
    this.#max = options.maxStrings ?? DEFAULT_MAX_STRINGS;
  }

  intern<T extends string | null | undefined>(value: T): T {
    if (value === null || value === undefined) return value;
    const known = this.#strings.get(value);
    if (known !== undefined) return known as T;
    if (this.#strings.size < this.#max) this.#strings.set(value, value);
    return value;
  }

  get size(): number {
    return this.#strings.size;
  }
}
