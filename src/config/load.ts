// Builds the one frozen Config: YAML file (GPUCAP_CONFIG) < GPUCAP_* env vars < schema defaults
// filling the gaps. Every problem is collected and reported at once, each naming its key and source.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { ConfigSchema, type Config } from './schema.js';

export const ENV_PREFIX = 'GPUCAP_';
const CONFIG_FILE_VAR = 'GPUCAP_CONFIG';
// Kubernetes injects these for every Service in the namespace (a Service named `gpucap-…` gives
// GPUCAP_…_SERVICE_HOST); treating them as unknown settings would crash-loop the pod. They always come
// as a set with <prefix>_SERVICE_HOST and <prefix>_SERVICE_PORT, which keeps a lone typo such as
// GPUCAP_LISTEN_PORT an error.
const SERVICE_LINK_SUFFIX = /^(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

function isServiceLink(name: string, env: Env): boolean {
  // Service names contain underscores too, so try every split into <prefix>_<suffix>.
  for (let at = name.indexOf('_'); at > 0; at = name.indexOf('_', at + 1)) {
    const prefix = name.slice(0, at);
    if (
      SERVICE_LINK_SUFFIX.test(name.slice(at + 1)) &&
      env[`${prefix}_SERVICE_HOST`] !== undefined &&
      env[`${prefix}_SERVICE_PORT`] !== undefined
    ) {
      return true;
    }
  }
  return false;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;
type Source = 'file' | 'env';

const properties = ConfigSchema.properties as Record<string, { type?: string; anyOf?: unknown }>;

export function envVarOf(key: string): string {
  return ENV_PREFIX + key.toUpperCase();
}

export function loadConfig(env: Env = process.env, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): Config {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  const sourceOf = new Map<string, Source>();

  const file = env[CONFIG_FILE_VAR];
  if (file) {
    for (const [key, value] of Object.entries(readYamlFile(file, readFile, problems))) {
      values[key] = value;
      sourceOf.set(key, 'file');
    }
  }
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || name === CONFIG_FILE_VAR || raw === undefined) continue;
    const key = name.slice(ENV_PREFIX.length).toLowerCase();
    if (!(key in properties)) {
      if (isServiceLink(name, env)) continue;
      problems.push(`${name}: unknown setting (known: ${Object.keys(properties).map(envVarOf).join(', ')})`);
      continue;
    }
    if (raw === '') continue; // an empty variable means "not set", as Helm renders unset values
    const value = coerceEnv(key, raw);
    if (value === INVALID_JSON) {
      const example = properties[key]?.type === 'object'
        ? 'a JSON object (e.g. {"NVIDIA-X9*":8})'
        : 'a JSON array (e.g. [{"file":"gpu-west.yaml","organization_id":"acme"}])';
      problems.push(`${name}: must be ${example}, got "${raw}"`);
      continue;
    }
    values[key] = value;
    sourceOf.set(key, 'env');
  }

  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
  const validate = ajv.compile(ConfigSchema);
  if (!validate(values)) {
    // A union of literals fails once per branch (`const`) and once as a whole (`anyOf`): report the whole.
    const errors = (validate.errors ?? []).filter((e) => e.keyword !== 'const');
    problems.push(...new Set(errors.map((error) => describe(error, sourceOf, file, values))));
  }
  problems.push(...crossKeyProblems(values, (key) => keyName(key, sourceOf, file), (key) => sourceOf.has(key)));
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(values) as Config;
}

function readYamlFile(path: string, readFile: (path: string) => string, problems: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    problems.push(`${CONFIG_FILE_VAR}: cannot read "${path}": ${(error as Error).message}`);
    return {};
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    problems.push(`${CONFIG_FILE_VAR}: "${path}" is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
    return {};
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    problems.push(`${CONFIG_FILE_VAR}: "${path}" must hold a mapping of settings`);
    return {};
  }
  return doc as Record<string, unknown>;
}

const INVALID_JSON = Symbol('invalid JSON');

// Env vars are strings; turn them into the schema's type so the same validation applies to both sources.
// A list of objects cannot be comma-separated: its env var holds JSON.
function coerceEnv(key: string, raw: string): unknown {
  const type = properties[key]?.type;
  if (type === 'array' && (properties[key] as { items?: { type?: string } }).items?.type === 'object') {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return INVALID_JSON;
    }
  }
  if (type === 'object') {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return INVALID_JSON;
    }
  }
  if (type === 'array') return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(raw.trim())) return Number(raw.trim());
  if (type === 'boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  return raw;
}

function describe(error: ErrorObject, sourceOf: Map<string, Source>, file: string | undefined, values: Record<string, unknown>): string {
  const extra = (error.params as { additionalProperty?: string }).additionalProperty;
  const [, key = extra ?? '', index, field] = error.instancePath.split('/');
  const inItem = field ?? (index !== undefined ? extra : undefined);
  const inList = index !== undefined ? ` (item ${index}${inItem !== undefined ? `, ${inItem}` : ''})` : '';
  const where = `${keyName(key, sourceOf, file)}${inList}`;
  if (error.keyword === 'additionalProperties') return `${where}: unknown setting`;
  const item = index !== undefined ? (values[key] as unknown[] | undefined)?.[Number(index)] : values[key];
  const raw = field !== undefined ? (item as Record<string, unknown> | undefined)?.[field] : item;
  const got = typeof raw === 'string' || typeof raw === 'number' ? `, got "${String(raw)}"` : '';
  if (error.keyword === 'enum' || error.keyword === 'anyOf') return `${where}: must be one of ${allowedValues(key, error)}${got}`;
  return `${where}: ${error.message ?? 'is invalid'}${got}`;
}

function keyName(key: string, sourceOf: Map<string, Source>, file: string | undefined): string {
  return sourceOf.get(key) === 'file' ? `${key} (in ${file ?? 'config file'})` : envVarOf(key);
}

function allowedValues(key: string, error: ErrorObject): string {
  const prop = properties[key] as { anyOf?: { const?: unknown }[]; items?: { anyOf?: { const?: unknown }[] } } | undefined;
  const options = prop?.anyOf ?? prop?.items?.anyOf;
  return options ? options.map((o) => String(o.const)).join(', ') : (error.message ?? '');
}

function crossKeyProblems(values: Record<string, unknown>, name: (key: string) => string, isSet: (key: string) => boolean): string[] {
  const problems: string[] = [];
  problems.push(...databaseProblems(values, name, isSet));
  const jwtOn = values.jwks_url !== undefined || values.jwks_file !== undefined;
  if (values.jwks_url !== undefined && values.jwks_file !== undefined) {
    problems.push(`${name('jwks_url')} and ${name('jwks_file')}: set one, not both`);
  }
  problems.push(...jwksUrlProblems(values, name));
  if (jwtOn && values.jwt_issuer === undefined) problems.push(`${name('jwt_issuer')}: required when JWT verification is on`);
  if (jwtOn && values.jwt_audience === undefined) problems.push(`${name('jwt_audience')}: required when JWT verification is on`);
  if (!jwtOn && values.api_tokens_file === undefined) {
    problems.push(`No credential source: set ${name('jwks_url')}, ${name('jwks_file')} or ` +
      `${name('api_tokens_file')}, or every request would be rejected`);
  }
  problems.push(...remoteClusterProblems(values, name));
  const interval = typeof values.scrape_interval_seconds === 'number' ? values.scrape_interval_seconds : 15;
  const timeout = values.scrape_timeout_seconds;
  if (typeof timeout === 'number' && timeout >= interval) {
    problems.push(`${name('scrape_timeout_seconds')}: must be shorter than ` +
      `${name('scrape_interval_seconds')} (${interval}), got ${timeout}`);
  }
  const bucket = values.telemetry_summary_seconds;
  if (typeof bucket === 'number' && 3600 % bucket !== 0) {
    problems.push(`${name('telemetry_summary_seconds')}: must divide 3600 (an hour holds whole buckets), got ${bucket}`);
  }
  const resolution = values.fleet_history_resolution_seconds;
  if (typeof resolution === 'number' && 3600 % resolution !== 0) {
    problems.push(`${name('fleet_history_resolution_seconds')}: must divide 3600 (an hour holds whole buckets), got ${resolution}`);
  }
  // Port 0 asks the OS for a free port each, so two ":0" addresses never collide.
  if (typeof values.listen === 'string' && values.listen === values.admin_listen && !values.listen.endsWith(':0')) {
    problems.push(`${name('admin_listen')}: must differ from ${name('listen')}`);
  }
  return problems;
}

/**
 * The JWKS decides every identity: fetched over plain http, it can be replaced on the way. A loopback
 * host never leaves the machine (an identity provider's sidecar, a test), so it may use http.
 */
function jwksUrlProblems(values: Record<string, unknown>, name: (key: string) => string): string[] {
  if (typeof values.jwks_url !== 'string') return [];
  let url: URL;
  try {
    url = new URL(values.jwks_url);
  } catch {
    return [`${name('jwks_url')}: is not a valid URL, got "${values.jwks_url}"`];
  }
  if (url.protocol !== 'http:' || values.jwks_allow_http === true || isLoopbackHost(url.hostname)) return [];
  return [`${name('jwks_url')}: must be https:// (keys fetched over plain http can be replaced on the way); http:// is ` +
    `accepted only for a loopback host (127.0.0.0/8, ::1, localhost) or with jwks_allow_http ` +
    `(${envVarOf('jwks_allow_http')}) set to true, got "${values.jwks_url}"`];
}

/** The URL parser has already turned every spelling of an IPv4 address (0x7f.1, 2130706433) into dotted decimal. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

// db_path has a default, so only a db_path the operator set conflicts with db_url.
function databaseProblems(values: Record<string, unknown>, name: (key: string) => string, isSet: (key: string) => boolean): string[] {
  const url = typeof values.db_url === 'string' ? values.db_url : undefined;
  const problems: string[] = [];
  if (url !== undefined && isSet('db_path')) problems.push(`${name('db_url')} and ${name('db_path')}: set one, not both`);
  const onPostgres = url !== undefined && !url.startsWith('sqlite:');
  if (!onPostgres && values.db_read_url !== undefined) problems.push(`${name('db_read_url')}: needs a PostgreSQL ${name('db_url')}`);
  return problems;
}

function remoteClusterProblems(values: Record<string, unknown>, name: (key: string) => string): string[] {
  const entries = Array.isArray(values.remote_clusters) ? (values.remote_clusters as { file?: unknown; cluster_id?: unknown }[]) : [];
  if (entries.length === 0) return [];
  const problems: string[] = [];
  if (values.remote_kubeconfig_dir === undefined) {
    problems.push(`${name('remote_clusters')}: needs ${name('remote_kubeconfig_dir')}, the folder of those files`);
  }
  const files = new Set<unknown>();
  const ids = new Set<unknown>(values.home_cluster_enabled === false ? [] : [values.cluster_id ?? 'local']);
  entries.forEach((entry, index) => {
    if (files.has(entry.file)) problems.push(`${name('remote_clusters')} (item ${index}): file "${String(entry.file)}" is listed twice`);
    files.add(entry.file);
    if (entry.cluster_id === undefined) return;
    if (ids.has(entry.cluster_id)) {
      problems.push(`${name('remote_clusters')} (item ${index}): cluster_id "${String(entry.cluster_id)}" is already used`);
    }
    ids.add(entry.cluster_id);
  });
  return problems;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
