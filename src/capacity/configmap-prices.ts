// Prices from the prices ConfigMaps (docs/capacity.md, "Prices"): one prices.yaml per organization,
// the last valid version of each in force, exactly as capacity.yaml's budgets are kept.
import type { PriceTable } from '../domain/price-table.js';
import type { WholeEvent } from '../k8s/objects/resource-event.js';
import {
  OrganizationConfigMaps, type ConfigMap, type ConfigMapLogger, type ConfigMapProblem,
} from './organization-configmaps.js';
import { parsePricesFile } from './prices-file.js';

export class ConfigMapPrices {
  readonly #files: OrganizationConfigMaps<PriceTable>;
  #version = 0;

  constructor(options: { key: string; logger: ConfigMapLogger }) {
    this.#files = new OrganizationConfigMaps<PriceTable>(
      {
        what: 'prices',
        removes: 'its prices',
        claims: 'priced',
        key: options.key,
        parse: (text, source) => ({ value: parsePricesFile(text, source), warnings: [] }),
        organizationOf: (table) => table.organizationId,
      },
      options.logger,
    );
    this.#files.onChange(() => {
      this.#version += 1;
    });
  }

  onEvent(event: WholeEvent<ConfigMap>): void {
    this.#files.onEvent(event);
  }

  get synced(): boolean {
    return this.#files.synced;
  }

  /** Moves whenever the tables in force may have changed. */
  get version(): number {
    return this.#version;
  }

  tableFor(organizationId: string): PriceTable | undefined {
    return this.#files.valueFor(organizationId);
  }

  tables(): PriceTable[] {
    return this.#files.values();
  }

  problems(): ConfigMapProblem[] {
    return this.#files.problems();
  }
}
