// One file per organization from labelled ConfigMaps (capacity.yaml, prices.yaml; DECISIONS
// "Capacity"). An edit that does not parse is rejected, logged once and reported, while that
// ConfigMap's last valid version stays in force. A deleted ConfigMap takes its file with it. Two
// ConfigMaps claiming one organization: the first by name wins, the other is reported.
import type { WholeEvent } from '../k8s/objects/resource-event.js';

export interface ConfigMap {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string | undefined>;
}

export type ConfigMapProblemReason = 'invalid' | 'missing_key' | 'duplicate_organization';

export interface ConfigMapProblem {
  /** `namespace/name` of the ConfigMap. */
  configMap: string;
  reason: ConfigMapProblemReason;
  problem: string;
  /** The rejected version's resourceVersion, when it had one. */
  resourceVersion?: string;
}

export interface ConfigMapLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface OrganizationFileKind<T> {
  /** The word of the log lines: `capacity` gives "capacity ConfigMap rejected". */
  what: string;
  /** What a deleted ConfigMap takes with it, for its log line: `its budget`. */
  removes: string;
  /** What a file does to its organization, for a duplicate's report: `budgeted`, `priced`. */
  claims: string;
  /** The ConfigMap key that holds the file. */
  key: string;
  /** The file's value and warnings about a valid one; throws an Error whose message names every problem. */
  parse(text: string, source: string): { value: T; warnings: string[] };
  organizationOf(value: T): string;
}

interface Entry<T> {
  /** The last version that parsed; undefined when none ever did. */
  value: T | undefined;
  /** Why the current version is rejected; null when it is the one in force. */
  problem: { reason: ConfigMapProblemReason; text: string } | null;
  resourceVersion: string | undefined;
}

export class OrganizationConfigMaps<T> {
  readonly #kind: OrganizationFileKind<T>;
  readonly #logger: ConfigMapLogger;
  readonly #entries = new Map<string, Entry<T>>();
  #byOrganization = new Map<string, { value: T; configMap: string }>();
  #conflicts: ConfigMapProblem[] = [];
  #synced = false;
  readonly #listeners: (() => void)[] = [];

  constructor(kind: OrganizationFileKind<T>, logger: ConfigMapLogger) {
    this.#kind = kind;
    this.#logger = logger;
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

  valueFor(organizationId: string): T | undefined {
    return this.#byOrganization.get(organizationId)?.value;
  }

  /** Every file in force, by organization. */
  values(): T[] {
    return [...this.#byOrganization.values()].map((entry) => entry.value);
  }

  /** ConfigMaps whose current version is not in force, and why. */
  problems(): ConfigMapProblem[] {
    const rejected: ConfigMapProblem[] = [];
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

  /** Called after every event, once the files in force reflect it. */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Applies one version of a ConfigMap; returns its name. */
  #apply(configMap: ConfigMap): string {
    const { what, key } = this.#kind;
    const name = nameOf(configMap);
    const resourceVersion = configMap.metadata?.resourceVersion;
    const previous = this.#entries.get(name);
    // A relist delivers every ConfigMap again: an unchanged version is neither re-parsed nor re-logged.
    if (previous !== undefined && resourceVersion !== undefined && previous.resourceVersion === resourceVersion) return name;
    const source = `ConfigMap ${name}`;
    const text = configMap.data?.[key];
    let value = previous?.value;
    let problem: Entry<T>['problem'] = null;
    if (text === undefined) {
      problem = { reason: 'missing_key', text: `${source} has no "${key}" key` };
    } else {
      try {
        const parsed = this.#kind.parse(text, source);
        value = parsed.value;
        for (const warning of parsed.warnings) this.#logger.warn({ configMap: name, warning }, `${what} ConfigMap accepted with a warning`);
      } catch (error) {
        problem = { reason: 'invalid', text: (error as Error).message };
      }
    }
    this.#entries.set(name, { value, problem, resourceVersion });
    if (problem !== null) {
      this.#logger.warn(
        {
          configMap: name,
          resourceVersion,
          problem: problem.text,
          keeping: value === undefined ? 'nothing (no valid version yet)' : 'the last valid version',
        },
        `${what} ConfigMap rejected`,
      );
    } else {
      const organizationId = value === undefined ? undefined : this.#kind.organizationOf(value);
      this.#logger.info({ configMap: name, resourceVersion, organizationId }, `${what} ConfigMap applied`);
    }
    return name;
  }

  #forget(name: string): void {
    if (!this.#entries.delete(name)) return;
    this.#logger.info({ configMap: name }, `${this.#kind.what} ConfigMap removed: ${this.#kind.removes} no longer applies`);
  }

  #rebuild(): void {
    const byOrganization = new Map<string, { value: T; configMap: string }>();
    const conflicts: ConfigMapProblem[] = [];
    for (const name of [...this.#entries.keys()].sort()) {
      const value = this.#entries.get(name)?.value;
      if (value === undefined) continue;
      const organizationId = this.#kind.organizationOf(value);
      const holder = byOrganization.get(organizationId);
      if (holder !== undefined) {
        conflicts.push({
          configMap: name,
          reason: 'duplicate_organization',
          problem: `ConfigMap ${name}: organization "${organizationId}" is ` +
            `already ${this.#kind.claims} by ConfigMap ${holder.configMap}; this one is ignored`,
        });
        continue;
      }
      byOrganization.set(organizationId, { value, configMap: name });
    }
    const known = new Set(this.#conflicts.map((c) => c.problem));
    for (const conflict of conflicts) {
      if (!known.has(conflict.problem)) {
        this.#logger.warn({ configMap: conflict.configMap, problem: conflict.problem }, `${this.#kind.what} ConfigMap rejected`);
      }
    }
    this.#byOrganization = byOrganization;
    this.#conflicts = conflicts;
    for (const listener of this.#listeners) listener();
  }
}

function nameOf(configMap: ConfigMap): string {
  return `${configMap.metadata?.namespace ?? ''}/${configMap.metadata?.name ?? ''}`;
}
