// Who the plugin calls the API as: the token from --token, then GPUCAP_TOKEN, then the config file;
// the organization from --org, then GPUCAP_ORG, then the file. The file is YAML with `token` and
// `organization`, at $GPUCAP_CONFIG, else $XDG_CONFIG_HOME/gpucap/config.yaml, else
// ~/.config/gpucap/config.yaml. The token is never printed: errors name where it was looked for.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { usageError } from './cli-error.js';

export interface Credentials {
  token: string;
  organizationId: string;
}

type Env = Readonly<Record<string, string | undefined>>;

export function configFilePath(env: Env): string {
  if (env.GPUCAP_CONFIG) return env.GPUCAP_CONFIG;
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'gpucap', 'config.yaml');
}

interface ConfigFile {
  token?: string;
  organization?: string;
}

/** The config file's settings; none when it does not exist. A file that exists must be valid. */
function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw usageError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    throw usageError(`${path} is not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw usageError(`${path} must be a YAML mapping with token and organization`);
  const config: ConfigFile = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (key !== 'token' && key !== 'organization') throw usageError(`${path}: unknown key "${key}" (known: token, organization)`);
    if (typeof value !== 'string' || value.trim() === '') throw usageError(`${path}: ${key} must be a non-empty string`);
    config[key] = value.trim();
  }
  return config;
}

export function resolveCredentials(flags: { token?: string; org?: string }, env: Env): Credentials {
  const path = configFilePath(env);
  // The file is read only when a flag or variable leaves something to find.
  let file: ConfigFile | undefined;
  const fromFile = () => (file ??= readConfigFile(path));
  const token = flags.token || env.GPUCAP_TOKEN || fromFile().token;
  const organizationId = flags.org || env.GPUCAP_ORG || fromFile().organization;
  if (!token) throw usageError(`No API token: pass --token, set GPUCAP_TOKEN, or write "token: <token>" in ${path}`);
  if (!organizationId) throw usageError(`No organization: pass --org, set GPUCAP_ORG, or write "organization: <id>" in ${path}`);
  return { token, organizationId };
}
