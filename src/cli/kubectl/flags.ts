// The command line: `kubectl gpucap <command> [argument] [flags]`, parsed by node:util's parseArgs
// (strict: an unknown flag or a missing value is a usage error, exit 1).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from './cli-error.js';

export const COMMANDS = ['workloads', 'workload', 'stats', 'metrics', 'top', 'capacity', 'fleet', 'nodes', 'chargeback', 'health'] as const;
export type Command = (typeof COMMANDS)[number];

const OPTIONS = {
  url: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  token: { type: 'string' },
  org: { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  // workloads
  status: { type: 'string' },
  team: { type: 'string' },
  user: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  managed: { type: 'string' },
  limit: { type: 'string' },
  // stats, metrics, top, capacity
  range: { type: 'string' },
  by: { type: 'string' },
  watch: { type: 'boolean', short: 'w' },
  interval: { type: 'string' },
  pool: { type: 'string' },
  // fleet, nodes
  cluster: { type: 'string' },
  model: { type: 'string' },
  state: { type: 'string' },
  // chargeback
  month: { type: 'string' },
  'group-by': { type: 'string' },
  'share-idle': { type: 'boolean' },
  csv: { type: 'boolean' },
} as const satisfies ParseArgsConfig['options'];

export type Flags = ReturnType<typeof parse>['values'];

function parse(args: readonly string[]) {
  return parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
}

/** Which flags each command takes besides the connection and output ones. */
const COMMAND_FLAGS: Record<Command, readonly (keyof typeof OPTIONS)[]> = {
  workloads: ['status', 'team', 'user', 'since', 'until', 'managed', 'limit'],
  workload: [],
  stats: ['range', 'by'],
  metrics: ['range'],
  top: ['by', 'limit', 'team', 'watch', 'interval'],
  capacity: ['pool', 'team'],
  fleet: ['by'],
  nodes: ['cluster', 'model', 'pool', 'state'],
  chargeback: ['month', 'group-by', 'share-idle', 'csv'],
  health: [],
};
const COMMON_FLAGS = ['url', 'context', 'namespace', 'token', 'org', 'output', 'help'];

export interface CommandLine {
  command: Command | undefined;
  argument: string | undefined;
  flags: Flags;
}

export function parseCommandLine(args: readonly string[]): CommandLine {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    throw usageError(`${(error as Error).message}\nRun kubectl gpucap --help for the commands and flags.`);
  }
  const [name, argument, ...extra] = parsed.positionals;
  if (name === undefined) return { command: undefined, argument: undefined, flags: parsed.values };
  if (!(COMMANDS as readonly string[]).includes(name)) throw usageError(`Unknown command "${name}" (commands: ${COMMANDS.join(', ')})`);
  const command = name as Command;
  const takesArgument = command === 'workload' || command === 'metrics';
  if (takesArgument && argument === undefined) throw usageError(`kubectl gpucap ${command} needs a workload ID`);
  if ((!takesArgument && argument !== undefined) || extra.length > 0) {
    throw usageError(`Unexpected argument "${takesArgument ? extra[0] : argument}" for ${command}`);
  }
  const allowed = new Set([...COMMON_FLAGS, ...COMMAND_FLAGS[command]]);
  const stray = Object.keys(parsed.values).filter((flag) => !allowed.has(flag));
  if (stray.length > 0) {
    throw usageError(`--${stray[0]} is not a flag of ${command} (its flags: ` +
      `${COMMAND_FLAGS[command].map((f) => `--${f}`).join(', ') || 'none'})`);
  }
  return { command, argument, flags: parsed.values };
}

export const USAGE = `kubectl gpucap: GPU workloads, usage and budgets from gpu-capacity-api

Usage: kubectl gpucap <command> [flags]

Commands:
  workloads            list workloads, newest first (every page, or --limit N)
                         --status pending|running|completed|failed|cancelled  --team ID  --user ID
                         --since 24h|7d|2026-11-01  --until …  --managed true|false  --limit N
  workload ID          one workload's full record
  stats                statistics of a range   --range last_30_days|last_7_days|today|this_week|this_month
                         --by team|user|instance_type|failure_reason
  metrics ID           one workload's GPU metrics   --range last_1h|last_6h|last_24h|job_lifetime
  top                  workloads ranked   --by gpu_utilization|memory_utilization|power_usage|gpu_hours
                         --limit N  --team ID  --watch [--interval SECONDS]
  capacity             GPU-hour budgets   --pool ID  --team ID
  fleet                the fleet's GPUs now (ORG_ADMIN)   --by model|pool|cluster|node
  nodes                the GPU nodes, every page (ORG_ADMIN)   --cluster ID  --model M  --pool ID
                         --state ready|cordoned|not_ready
  chargeback           a month's statement per team (ORG_ADMIN)   --month YYYY-MM (default: this UTC month)
                         --group-by user|pool|model  --share-idle  --csv (the service's CSV file)
  health               the service's health

Connection (default: the service of the current kubeconfig context, port-forwarded):
  --url URL            call this URL instead (no kubeconfig, no port-forward)
  --context NAME       kubeconfig context     -n, --namespace NS   namespace of the service
  --token TOKEN        else $GPUCAP_TOKEN, else "token:" in ~/.config/gpucap/config.yaml
  --org ID             else $GPUCAP_ORG, else "organization:" in that file

Output: -o table|wide|json|yaml|csv (default table)
Exit codes: 0 success, 1 a client error (bad flag, refused request), 2 a server or connection error
`;
