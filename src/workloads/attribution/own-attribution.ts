// What an object's own labels and annotations say about whom its workload is for. Many objects say
// the same (a team's pods carry the same labels), so one shared record stands for each combination.
import type { ObjectMeta } from '../../k8s/objects/k8s-types.js';
import { isManagedOf, ownInitiative, submittedByOf } from './labels.js';
import type { LabelKeys } from './label-keys.js';
import type { StringTable } from '../../k8s/objects/string-table.js';

export interface OwnAttribution {
  /** The object's initiative label; undefined when unset (the Namespace's then applies, labels.ts). */
  readonly initiative: string | undefined;
  readonly submittedBy: string;
  readonly isManaged: boolean;
}

/** Distinct attributions kept before new ones are no longer shared (a label unique per object). */
const MAX_SHARED = 65_536;

export class Attributions {
  readonly #shared = new Map<string, OwnAttribution>();
  readonly #keys: Readonly<LabelKeys>;
  readonly #strings: StringTable;

  constructor(keys: Readonly<LabelKeys>, strings: StringTable) {
    this.#keys = keys;
    this.#strings = strings;
  }

  of(meta: ObjectMeta | undefined): OwnAttribution {
    const initiative = ownInitiative(meta, this.#keys);
    const submittedBy = submittedByOf(meta, this.#keys);
    const isManaged = isManagedOf(meta, this.#keys);
    const key = `${initiative ?? '\u0000'}\u0001${submittedBy}\u0001${isManaged ? 1 : 0}`;
    const known = this.#shared.get(key);
    if (known !== undefined) return known;
    const attribution: OwnAttribution = Object.freeze({
      initiative: this.#strings.intern(initiative),
      submittedBy: this.#strings.intern(submittedBy),
      isManaged,
    });
    if (this.#shared.size < MAX_SHARED) this.#shared.set(key, attribution);
    return attribution;
  }
}
