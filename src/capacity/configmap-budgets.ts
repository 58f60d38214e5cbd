// Budgets from the capacity ConfigMaps (DECISIONS "Capacity"): one capacity.yaml per organization,
// the last valid version of each in force (src/capacity/organization-configmaps.ts). The budgets
// also map namespaces to initiatives, and tell their listeners which namespaces moved.
import type { BudgetSource } from '../query/ports.js';
import type { CapacityBudget } from '../domain/capacity-budget.js';
import type { NamespaceInitiatives } from '../domain/namespace-initiatives.js';
import type { WholeEvent } from '../k8s/objects/resource-event.js';
import {
  OrganizationConfigMaps, type ConfigMap, type ConfigMapLogger, type ConfigMapProblem, type ConfigMapProblemReason,
} from './organization-configmaps.js';
import { parseCapacityFileWithWarnings } from './capacity-file.js';

export type { ConfigMap } from './organization-configmaps.js';
export type CapacityProblemReason = ConfigMapProblemReason;
export type CapacityProblem = ConfigMapProblem;
export type CapacityLogger = ConfigMapLogger;

export class ConfigMapBudgets implements BudgetSource, NamespaceInitiatives {
  readonly #files: OrganizationConfigMaps<CapacityBudget>;
  /** `organization NUL namespace` → initiative, from the budgets in force (NUL: in neither name). */
  #initiativeOfNamespace = new Map<string, string>();
  readonly #listeners: ((namespaces: ReadonlySet<string>) => void)[] = [];

  constructor(options: { key: string; logger: CapacityLogger }) {
    this.#files = new OrganizationConfigMaps<CapacityBudget>(
      {
        what: 'capacity',
        removes: 'its budget',
        claims: 'budgeted',
        key: options.key,
        parse: (text, source) => {
          const { budget, warnings } = parseCapacityFileWithWarnings(text, source);
          return { value: budget, warnings };
        },
        organizationOf: (budget) => budget.organizationId,
      },
      options.logger,
    );
    this.#files.onChange(() => this.#remapNamespaces());
  }

  onEvent(event: WholeEvent<ConfigMap>): void {
    this.#files.onEvent(event);
  }

  /** The first complete LIST has been applied. */
  get synced(): boolean {
    return this.#files.synced;
  }

  budgetFor(organizationId: string): CapacityBudget | undefined {
    return this.#files.valueFor(organizationId);
  }

  /** Every budget in force, by organization. */
  budgets(): CapacityBudget[] {
    return this.#files.values();
  }

  /** ConfigMaps whose current version is not in force, and why. */
  problems(): CapacityProblem[] {
    return this.#files.problems();
  }

  /** The initiative a budget assigns to a namespace of the organization. */
  initiativeOf(organizationId: string, namespace: string): string | undefined {
    return this.#initiativeOfNamespace.get(`${organizationId}\0${namespace}`);
  }

  /** Called after every change of the budgets in force, with the namespaces whose initiative changed. */
  onChange(listener: (namespaces: ReadonlySet<string>) => void): void {
    this.#listeners.push(listener);
  }

  #remapNamespaces(): void {
    const mapping = new Map<string, string>();
    for (const budget of this.#files.values()) {
      for (const initiative of budget.initiatives) {
        for (const namespace of initiative.namespaces) mapping.set(`${budget.organizationId}\0${namespace}`, initiative.initiativeId);
      }
    }
    const changed = new Set<string>();
    for (const key of new Set([...mapping.keys(), ...this.#initiativeOfNamespace.keys()])) {
      if (mapping.get(key) !== this.#initiativeOfNamespace.get(key)) changed.add(key.slice(key.indexOf('\0') + 1));
    }
    this.#initiativeOfNamespace = mapping;
    for (const listener of this.#listeners) listener(changed);
  }
}
