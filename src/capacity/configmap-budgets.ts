// Budgets from the capacity ConfigMaps (DECISIONS "Capacity"). Each ConfigMap holds one
// organization's capacity.yaml; an edit that does not parse is rejected, logged once and reported,
// while that ConfigMap's last valid version stays in force. A deleted ConfigMap takes its budget with
// it. Two ConfigMaps claiming one organization: the first by name wins, the other is reported.
import type { BudgetSource } from '../query/ports.js';
import type { CapacityBudget } from '../domain/capacity-budget.js';
import type { NamespaceInitiatives } from '../domain/namespace-initiatives.js';
import type { WholeEvent } from '../k8s/objects/resource-event.js';
import { parseCapacityFileWithWarnings } from './capacity-file.js';

export interface ConfigMap {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string | undefined>;
}

export type CapacityProblemReason = 'invalid' | 'missing_key' | 'duplicate_organization';

export interface CapacityProblem {
  /** `namespace/name` of the ConfigMap. */
  configMap: string;
  reason: CapacityProblemReason;
  problem: string;
  /** The rejected version's resourceVersion, when it had one. */
  resourceVersion?: string;
}

export interface CapacityLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

interface Entry {
  /** The last version that parsed; undefined when none ever did. */
  budget: CapacityBudget | undefined;
  /** Why the current version is rejected; null when it is the one in force. */
  problem: { reason: CapacityProblemReason; text: string } | null;
  resourceVersion: string | undefined;
}

export class ConfigMapBudgets implements BudgetSource, NamespaceInitiatives {
  readonly #key: string;
  readonly #logger: CapacityLogger;
  readonly #entries = new Map<string, Entry>();
  #byOrganization = new Map<string, { budget: CapacityBudget; configMap: string }>();
  #conflicts: CapacityProblem[] = [];
  /** `organization NUL namespace` → initiative, from the budgets in force (NUL: in neither name). */
  #initiativeOfNamespace = new Map<string, string>();
  #synced = false;
  readonly #listeners: ((namespaces: ReadonlySet<string>) => void)[] = [];

  constructor(options: { key: string; logger: CapacityLogger }) {
    this.#key = options.key;
    this.#logger = options.logger;
  }

  onEvent(event: WholeEvent<ConfigMap>): void {
    if (event.type === 'SYNC') {
      const present = new Set<string>();
      for (const configMap of event.items) present.add(this.#apply(configMap));
      for (const name of [...this.#entries.keys()]) if (!present.has(name)) this.#forget(name);
      this.#synced = true;
    } else if (event.type === 'DELETED') {
      this.#forget(nameOf(event.object));
    } else {
      this.#apply(event.object);
    }
    this.#rebuild();
  }

  /** The first complete LIST has been applied. */
  get synced(): boolean {
    return this.#synced;
  }

  budgetFor(organizationId: string): CapacityBudget | undefined {
    return this.#byOrganization.get(organizationId)?.budget;
  }

  /** Every budget in force, by organization. */
  budgets(): CapacityBudget[] {
    return [...this.#byOrganization.values()].map((entry) => entry.budget);
  }

  /** ConfigMaps whose current version is not in force, and why. */
  problems(): CapacityProblem[] {
    const rejected: CapacityProblem[] = [];
    for (const [configMap, entry] of this.#entries) {
      if (entry.problem !== null) {
        rejected.push({
          configMap,
          reason: entry.problem.reason,
          problem: entry.problem.text,
          ...(entry.resourceVersion === undefined ? {} : { resourceVersion: entry.resourceVersion }),
        });
      }
    }
    return [...rejected, ...this.#conflicts].sort((a, b) => a.configMap.localeCompare(b.configMap));
  }

  /** The initiative a budget assigns to a namespace of the organization. */
  initiativeOf(organizationId: string, namespace: string): string | undefined {
    return this.#initiativeOfNamespace.get(`${organizationId}\0${namespace}`);
  }

  /** Called after every change of the budgets in force, with the namespaces whose initiative changed. */
  onChange(listener: (namespaces: ReadonlySet<string>) => void): void {
    this.#listeners.push(listener);
  }

  /** Applies one version of a ConfigMap; returns its name. */
  #apply(configMap: ConfigMap): string {
    const name = nameOf(configMap);
    const resourceVersion = configMap.metadata?.resourceVersion;
    const previous = this.#entries.get(name);
    // A relist delivers every ConfigMap again: an unchanged version is neither re-parsed nor re-logged.
    if (previous !== undefined && resourceVersion !== undefined && previous.resourceVersion === resourceVersion) return name;
    const source = `ConfigMap ${name}`;
    const text = configMap.data?.[this.#key];
    let budget = previous?.budget;
    let problem: Entry['problem'] = null;
    if (text === undefined) {
      problem = { reason: 'missing_key', text: `${source} has no "${this.#key}" key` };
    } else {
      try {
        const parsed = parseCapacityFileWithWarnings(text, source);
        budget = parsed.budget;
        for (const warning of parsed.warnings) {
          this.#logger.warn({ configMap: name, warning }, 'capacity ConfigMap accepted with a warning');
        }
      } catch (error) {
        problem = { reason: 'invalid', text: (error as Error).message };
      }
    }
    this.#entries.set(name, { budget, problem, resourceVersion });
    if (problem !== null) {
      this.#logger.warn(
        {
          configMap: name,
          resourceVersion,
          problem: problem.text,
          keeping: budget === undefined ? 'nothing (no valid version yet)' : 'the last valid version',
        },
        'capacity ConfigMap rejected',
      );
    } else {
      this.#logger.info({ configMap: name, resourceVersion, organizationId: budget?.organizationId }, 'capacity ConfigMap applied');
    }
    return name;
  }

  #forget(name: string): void {
    if (!this.#entries.delete(name)) return;
    this.#logger.info({ configMap: name }, 'capacity ConfigMap removed: its budget no longer applies');
  }

  #rebuild(): void {
    const byOrganization = new Map<string, { budget: CapacityBudget; configMap: string }>();
    const conflicts: CapacityProblem[] = [];
    for (const name of [...this.#entries.keys()].sort()) {
      const budget = this.#entries.get(name)?.budget;
      if (budget === undefined) continue;
      const holder = byOrganization.get(budget.organizationId);
      if (holder !== undefined) {
        conflicts.push({
          configMap: name,
          reason: 'duplicate_organization',
          problem: `ConfigMap ${name}: organization "${budget.organizationId}" is ` +
            `already budgeted by ConfigMap ${holder.configMap}; this one is ignored`,
        });
        continue;
      }
      byOrganization.set(budget.organizationId, { budget, configMap: name });
    }
    const known = new Set(this.#conflicts.map((c) => c.problem));
    for (const conflict of conflicts) {
      if (!known.has(conflict.problem)) {
        this.#logger.warn({ configMap: conflict.configMap, problem: conflict.problem }, 'capacity ConfigMap rejected');
      }
    }
    this.#byOrganization = byOrganization;
    this.#conflicts = conflicts;
    const mapping = new Map<string, string>();
    for (const { budget } of byOrganization.values()) {
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

function nameOf(configMap: ConfigMap): string {
  return `${configMap.metadata?.namespace ?? ''}/${configMap.metadata?.name ?? ''}`;
}
