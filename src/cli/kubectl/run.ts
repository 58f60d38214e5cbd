// One invocation of kubectl gpucap: the command line, the credentials, a connection to the service
// (--url, or the port-forward `connect` opens), the command's view in the chosen format. Returns the
// exit code; --watch runs until the signal aborts it.
import { ApiClient } from './api-client.js';
import { CliError, usageError } from './cli-error.js';
import { capacityView } from './commands/capacity.js';
import { CHARGEBACK_GROUPS, chargebackCsvView, chargebackView, type ChargebackGroupName } from './commands/chargeback.js';
import { FLEET_GROUPS, fleetView, nodesView, type FleetGroupName } from './commands/fleet.js';
import { healthView } from './commands/health.js';
import { metricsView } from './commands/metrics.js';
import { GROUP_BY, statsView, type GroupName } from './commands/stats.js';
import { TOP_KEYS, topView } from './commands/top.js';
import { workloadView } from './commands/workload.js';
import { workloadsView } from './commands/workloads.js';
import { resolveCredentials } from './credentials.js';
import { exposureWarnings } from './exposure-warnings.js';
import { parseCommandLine, USAGE, type CommandLine } from './flags.js';
import { outputFormat, render, type View } from './output/formats.js';
import { instantFlag, monthFlag, oneOf, positiveInteger } from './values.js';

/** A way to the service: its base URL, open until closed. */
export interface Connection {
  url: string;
  /** Why the way to the service failed, when it knows (a port-forward's refusal). */
  failure?(): string | undefined;
  close(): Promise<void>;
}

export interface RunContext {
  env: Readonly<Record<string, string | undefined>>;
  out: (text: string) => void;
  err: (text: string) => void;
  now: () => number;
  /** Opens the port-forward to the service of the kubeconfig's context (used without --url). */
  connect: (options: { context: string | undefined; namespace: string | undefined }) => Promise<Connection>;
  /** Ends --watch (Ctrl-C). */
  signal?: AbortSignal;
  /** Waits between --watch refreshes. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const STATS_RANGES = ['today', 'this_week', 'this_month', 'last_7_days', 'last_30_days'] as const;
const METRICS_RANGES = ['last_1h', 'last_6h', 'last_24h', 'job_lifetime'] as const;
const STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;

export async function run(args: readonly string[], context: RunContext): Promise<number> {
  let connection: Connection | undefined;
  try {
    const line = parseCommandLine(args);
    if (line.command === undefined || line.flags.help) {
      context.out(USAGE);
      return line.command === undefined && !line.flags.help ? 1 : 0;
    }
    const format = outputFormat(line.flags.output);
    const credentials = resolveCredentials({ token: line.flags.token, org: line.flags.org }, context.env);
    const show = viewOf(line, context.now);
    const url = line.flags.url === undefined ? undefined : checkedUrl(line.flags.url);
    // Once the command line is known good, before the token is sent anywhere.
    for (const warning of exposureWarnings({ token: line.flags.token, url }, context.env)) context.err(warning);
    connection = url !== undefined
      ? { url, close: async () => undefined }
      : await context.connect({ context: line.flags.context, namespace: line.flags.namespace });
    const client = new ApiClient(connection.url, credentials);
    if (line.command === 'top' && line.flags.watch) {
      await watch(() => show(client), format, context, positiveInteger('interval', line.flags.interval, 3600) ?? 5);
    } else {
      context.out(render(await show(client), format));
    }
    return 0;
  } catch (error) {
    if (error instanceof CliError) {
      const reason = error.exitCode === 2 ? connection?.failure?.() : undefined;
      context.err(`${error.message}\n${reason === undefined ? '' : `  port-forward: ${reason}\n`}`);
      return error.exitCode;
    }
    context.err(`Error: ${(error as Error).message}\n`);
    return 2;
  } finally {
    await connection?.close();
  }
}

function checkedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http or https');
    return url;
  } catch {
    throw usageError(`--url must be an http:// or https:// URL, not "${url}"`);
  }
}

/** The command's view, its flags checked before anything is requested. */
function viewOf({ command, argument, flags }: CommandLine, now: () => number): (client: ApiClient) => Promise<View<unknown>> {
  switch (command) {
    case 'workloads': {
      const managed = oneOf('managed', flags.managed, ['true', 'false'] as const);
      const filters = {
        status: oneOf('status', flags.status, STATUSES), initiative_id: flags.team, submitted_by: flags.user, is_managed: managed,
        start_date: instantFlag('since', flags.since, now()), end_date: instantFlag('until', flags.until, now()),
      };
      const limit = positiveInteger('limit', flags.limit, 1_000_000);
      return async (client) => workloadsView(client, { filters, limit }, now()) as Promise<View<unknown>>;
    }
    case 'workload':
      return async (client) => workloadView(client, argument ?? '') as Promise<View<unknown>>;
    case 'stats': {
      const range = oneOf('range', flags.range, STATS_RANGES) ?? 'last_30_days';
      const by = oneOf('by', flags.by, Object.keys(GROUP_BY) as GroupName[]);
      return async (client) => statsView(client, { range, by }) as Promise<View<unknown>>;
    }
    case 'metrics': {
      const range = oneOf('range', flags.range, METRICS_RANGES) ?? 'last_1h';
      return async (client) => metricsView(client, argument ?? '', range) as Promise<View<unknown>>;
    }
    case 'top': {
      const by = oneOf('by', flags.by, TOP_KEYS) ?? 'gpu_utilization';
      const limit = positiveInteger('limit', flags.limit, 100) ?? 10;
      return async (client) => topView(client, { by, limit, team: flags.team }) as Promise<View<unknown>>;
    }
    case 'capacity':
      return async (client) => capacityView(client, { pool: flags.pool, team: flags.team }) as Promise<View<unknown>>;
    case 'fleet': {
      const by = oneOf('by', flags.by, Object.keys(FLEET_GROUPS) as FleetGroupName[]) ?? 'model';
      return async (client) => fleetView(client, { by }) as Promise<View<unknown>>;
    }
    case 'nodes': {
      const state = oneOf('state', flags.state, ['ready', 'cordoned', 'not_ready'] as const);
      const filters = { cluster: flags.cluster, model: flags.model, pool: flags.pool, state };
      return async (client) => nodesView(client, filters) as Promise<View<unknown>>;
    }
    case 'chargeback': {
      const by = oneOf('group-by', flags['group-by'], Object.keys(CHARGEBACK_GROUPS) as ChargebackGroupName[]);
      const options = { month: monthFlag(flags.month, now()), by, shareIdle: flags['share-idle'] === true };
      if (flags.csv && flags.output !== undefined) throw usageError('--csv prints the service\'s own CSV file: leave out -o');
      const view = flags.csv ? chargebackCsvView : chargebackView;
      return async (client) => view(client, options) as Promise<View<unknown>>;
    }
    default:
      return async (client) => healthView(client) as Promise<View<unknown>>;
  }
}

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });

/** Refreshes the view every `seconds` until the signal aborts; a table starts each refresh on a cleared screen. */
async function watch(
  show: () => Promise<View<unknown>>,
  format: ReturnType<typeof outputFormat>,
  context: RunContext,
  seconds: number,
): Promise<void> {
  const sleep = context.sleep ?? defaultSleep;
  const clear = format === 'table' || format === 'wide' ? '\u001b[H\u001b[2J' : '';
  while (!context.signal?.aborted) {
    const view = await show();
    context.out(`${clear}${render(view, format)}`);
    await sleep(seconds * 1000, context.signal);
  }
}
