// The one source of truth for configuration: every key, its type, default and meaning.
// YAML key `foo_bar` in GPUCAP_CONFIG is overridden by env var GPUCAP_FOO_BAR. docs/configuration.md
// is generated from this schema (npm run docs:config) and a test fails when the two drift.
import { Type, type Static } from '@sinclair/typebox';

// host:port with a port 0-65535 (0: any free port).
const PORT = '(6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})';
const HostPort = (def: string, description: string) =>
  Type.String({ default: def, pattern: `^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+):${PORT}$`, description });
const OptionalPath = (description: string) => Type.Optional(Type.String({ minLength: 1, description }));
const ClusterId = (description: string, def?: string) =>
  Type.String({ ...(def === undefined ? {} : { default: def }), pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$', description });
// A Kubernetes label key: optional DNS-subdomain prefix and "/", then a name of up to 63 characters.
const LABEL_KEY = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$';
const LabelKey = (def: string, description: string) => Type.String({ default: def, pattern: LABEL_KEY, description });
const NAMESPACE = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';
/** A GPU product as GFD names it, or its prefix with a trailing `*`. */
const PRODUCT = '^[A-Za-z0-9][A-Za-z0-9 ._-]*\\*?$';
const Seconds = (def: number, min: number, max: number, description: string) =>
  Type.Integer({ default: def, minimum: min, maximum: max, description });

export const ConfigSchema = Type.Object(
  {
    listen: HostPort('0.0.0.0:8080', 'Address of the API (`/v1`).'),
    admin_listen: HostPort('0.0.0.0:9090', 'Address of the admin server (`/livez`, ' +
      '`/readyz`, `/metrics`). Keep it off the public Service.'),
    admin_auth: Type.Union([Type.Literal('kubernetes'), Type.Literal('none')], {
      default: 'kubernetes',
      description: 'Who may read `/metrics`, which names every organization, team and budget: `kubernetes` asks the ' +
        'API server of the cluster the service runs in (its in-cluster service account, else `kubeconfig`) to ' +
        'authenticate the bearer token (TokenReview) and to authorize `get` on the non-resource URL `/metrics` ' +
        '(SubjectAccessReview), as Kubernetes\' own components do; the service account needs `system:auth-delegator`. ' +
        '`none`: anyone who reaches the admin port reads it (warned at start). `/livez` and `/readyz` are always open, ' +
        'and name no tenant.',
    }),
    admin_auth_cache_seconds: Seconds(10, 0, 300, 'How long a TokenReview and SubjectAccessReview answer for `/metrics` ' +
      'is reused for the same token (allowed and denied alike), so a scrape every few seconds costs the API server ' +
      'nothing more. `0`: ask at every request.'),
    db_path: Type.String({
      default: './data/index.db',
      minLength: 1,
      description: 'SQLite index file. Its folder is created when missing. The image sets ' +
        '`/var/lib/gpu-capacity-api/index.db`. Ignored when `db_url` names PostgreSQL.',
    }),
    db_url: Type.Optional(
      Type.String({
        pattern: '^(sqlite:.+|postgres(ql)?://.+)$',
        description: 'The index database: `sqlite:PATH` (one pod; the same as `db_path`) or a PostgreSQL URL ' +
          '`postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=…` (many replicas, and many clusters sharing one ' +
          'database; docs/scaling.md). Unset: `sqlite:` + `db_path`. Set one of `db_url` and `db_path`, not both.',
      }),
    ),
    db_read_url: Type.Optional(
      Type.String({
        pattern: '^postgres(ql)?://.+$',
        description: 'PostgreSQL only: a read-only URL (a hot standby) for reads; writes and leases stay on ' +
          '`db_url`. A standby lags the primary, so answers may trail the latest flush by its replication lag.',
      }),
    ),
    db_pool_size: Type.Integer({
      default: 4,
      minimum: 1,
      maximum: 64,
      description: 'PostgreSQL only: connections of the read pool. Each cluster this ' +
        'replica writes adds one more connection, which holds its write lock.',
    }),
    db_prepared_statements: Type.Boolean({
      default: true,
      description: 'PostgreSQL only: run the lists without dates and the lookups by id as named prepared statements, planned ' +
        'once per connection instead of at every request (a list page plans in 2–5 ms over the monthly partitions, ' +
        'and runs in 0.2 ms). `false` behind a pooler that cannot carry named statements from one transaction to the ' +
        'next: PgBouncer in transaction or statement mode before 1.21, or from 1.21 with `max_prepared_statements` = 0.',
    }),
    instance_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        pattern: '^[A-Za-z0-9._:-]+$',
        description: 'Name of this replica in the writer leases (`/readyz`, `/metrics`, and ' +
          'PostgreSQL\'s `application_name`). Unset: `$HOSTNAME`, the pod name in Kubernetes.',
      }),
    ),
    ha_lease_seconds: Seconds(10, 3, 300, 'PostgreSQL only: a cluster\'s writer whose heartbeat is older than this is presumed ' +
      'dead; a standby then ends its database session, which releases the write lock, and takes over.'),
    ha_retry_seconds: Seconds(2, 1, 60, 'PostgreSQL only: how often a standby tries to take a cluster\'s ' +
      'write lock (with 20 % jitter), and the writer\'s heartbeat period.'),
    retention_days: Seconds(400, 1, 36500, 'Days a finished workload stays in the index after it completed.'),
    cluster_id: ClusterId('Id of the home cluster, shown as `cluster_id` of its workloads.', 'local'),
    kubeconfig: OptionalPath('Kubeconfig of the home cluster. Unset: the in-cluster ' +
      'service account, else `$KUBECONFIG`, else `~/.kube/config`.'),
    remote_kubeconfig_dir: OptionalPath('Folder of kubeconfig files, one extra cluster each; watched for files added and removed.'),
    home_cluster_enabled: Type.Boolean({
      default: true,
      description: 'Watch the home cluster. `false` for a deployment that only ' +
        'watches the clusters of `remote_kubeconfig_dir` (a management cluster).',
    }),
    cluster_organization_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'Organization of the home cluster\'s workloads whose namespace ' +
          'carries no organization label. Unset: `default_organization_id`.',
      }),
    ),
    remote_clusters: Type.Array(
      Type.Object(
        {
          file: Type.String({ pattern: '^[^/.][^/]*$', description: 'File name inside `remote_kubeconfig_dir`.' }),
          cluster_id: Type.Optional(ClusterId('Id of the cluster. Default: the current-context name of the file.')),
          organization_id: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 128,
              description: 'Organization of the cluster\'s workloads whose namespace carries no organization label.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
      {
        default: [],
        description: 'Settings per remote kubeconfig file: `[{file, cluster_id, organization_id}]`. Files ' +
          'without an entry use their current-context name as id. A JSON array in the env var.',
      },
    ),
    remote_kubeconfig_reload_seconds: Seconds(10, 1, 3600, 'How often `remote_kubeconfig_dir` is checked for files ' +
      'added, changed (re-connect) or removed (stop watching).'),
    cluster_unreachable_after_seconds: Seconds(30, 1, 3600, 'A cluster whose informers have not synced and keep failing this ' +
      'long stops holding back readiness; it shows as degraded until it syncs.'),
    watch_namespaces: Type.Array(Type.String({ pattern: NAMESPACE }), {
      default: [],
      uniqueItems: true,
      description: 'Namespaces whose Pods and Jobs are watched, in every cluster. Empty: all namespaces. Comma-separated in the env var.',
    }),
    gpu_resources: Type.Array(Type.String({ pattern: '^[A-Za-z0-9.-]+/[A-Za-z0-9._-]+\\*?$' }), {
      default: ['nvidia.com/gpu', 'nvidia.com/gpu.shared', 'nvidia.com/mig-*'],
      minItems: 1,
      uniqueItems: true,
      description: 'Extended resource names counted as GPUs; a trailing `*` ' +
        'matches a prefix (MIG profiles). Comma-separated in the env var.',
    }),
    gpu_hours_basis: Type.Union([Type.Literal('equivalents'), Type.Literal('devices')], {
      default: 'equivalents',
      description: 'What a GPU-hour counts: whole-GPU equivalents (a 1g.10gb MIG slice of an H100 is 1/7, one of 4 ' +
        'time-sliced replicas 1/4), or devices (each slice or replica is one GPU, as some billing does). ' +
        'docs/workloads.md, "How GPUs are counted".',
    }),
    mig_total_slices: Type.Record(Type.String({ pattern: PRODUCT }), Type.Integer({ minimum: 1, maximum: 64 }), {
      default: {},
      description: 'MIG compute slices of GPU products the service does not know, by GFD product name ' +
        '(`NVIDIA-H100-80GB-HBM3`) or its prefix with a trailing `*`; known: 7 on A100, H100, H200, B200 and kin, ' +
        '4 on A30. JSON in the env var.',
    }),
    kai_reservation_namespace: Type.String({
      default: 'kai-resource-reservation',
      pattern: '^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$',
      description: 'The namespace of KAI Scheduler\'s reservation pods, which hold the GPUs behind its fractions: ' +
        'its pods are no workloads (their GPUs are charged to the fraction pods). Empty: none.',
    }),
    label_initiative: LabelKey('gpucap.io/initiative', 'Label (object, then namespace) holding the initiative id.'),
    initiative_source: Type.Union([Type.Literal('labels'), Type.Literal('namespace')], {
      default: 'labels',
      description: 'Who decides a workload\'s initiative (team). `labels`: the object\'s own label, then its namespace\'s. ' +
        '`namespace`: the namespace alone (its label, then capacity.yaml\'s mapping, then its name); an object\'s own ' +
        'label counts only when the namespace allows it in `label_allowed_initiatives`. Recommended for clusters that ' +
        'teams share, where a Job author could otherwise charge another team\'s budget.',
    }),
    label_allowed_initiatives: LabelKey('gpucap.io/allowed-initiatives', 'Namespace annotation listing, comma-separated, ' +
      'the initiatives its objects may name in their own label when `initiative_source` is `namespace`.'),
    label_organization: LabelKey('gpucap.io/organization', 'Namespace label holding the organization id.'),
    label_submitted_by: LabelKey('gpucap.io/submitted-by', 'Label, then annotation, holding who submitted a workload.'),
    label_managed: LabelKey('gpucap.io/managed', 'Label marking a workload as managed (`true`/`false`).'),
    label_kueue_queue_name: LabelKey('kueue.x-k8s.io/queue-name', 'Label whose presence marks a workload ' +
      'as managed when `label_managed` is absent.'),
    label_instance_type: LabelKey('node.kubernetes.io/instance-type', 'Node label holding the instance type.'),
    label_gpu_product: LabelKey('nvidia.com/gpu.product', 'Node label used as instance type when the instance-type label is absent.'),
    label_capacity_type: Type.String({
      default: '',
      pattern: `^(${LABEL_KEY.slice(1, -1)})?$`,
      description: 'Node label holding how the node is sold: on-demand, spot or reserved, for pricing (docs/capacity.md, ' +
        '"Prices"). Its value is read case-insensitively, `_` as `-`: `on-demand`, `ondemand`, `regular` and `standard` ' +
        'are on-demand, `spot` and `preemptible` spot, `reserved` and `capacity-block` reserved. Empty: the well-known labels, ' +
        'the first that says wins: `karpenter.sh/capacity-type`, `eks.amazonaws.com/capacityType`, ' +
        '`cloud.google.com/gke-spot`, `cloud.google.com/gke-preemptible`, `kubernetes.azure.com/scalesetpriority`. ' +
        'No label: unknown.',
    }),
    fleet_history_resolution_seconds: Seconds(60, 1, 3600, 'The clock buckets in which each node\'s GPU time is integrated ' +
      'before its cluster\'s writer adds them to the fleet\'s history (docs/fleet.md, "History"): the history runs this much ' +
      'behind, plus fleet_history_flush_seconds. Must divide 3600.'),
    fleet_history_flush_seconds: Seconds(15, 1, 300, 'How often the writer of each cluster adds the closed buckets of its ' +
      'nodes\' GPU time to the fleet\'s history.'),
    index_flush_interval_ms: Type.Integer({
      default: 100,
      minimum: 10,
      maximum: 10000,
      description: 'How often the changes queued from watch events are written to the index. A write goes in steps of 2,000 rows ' +
        'or pod intervals on the write worker (500, with requests served between steps, where writes run on the main ' +
        'thread), one transaction each; a change is visible after the next interval, plus the steps of a larger ' +
        'backlog queued before it. While the writes take longer than the interval, the next batch follows without waiting.',
    }),
    read_workers: Type.Integer({
      default: 2,
      minimum: 0,
      maximum: 16,
      description: 'Worker threads answering the index reads (lists, statistics, rankings, capacity), each with its own ' +
        'read-only connection to `db_path`, so that a heavy query never holds up watch events, index writes, probes ' +
        'or other requests, and reads use a second core. `0`: reads run on the main thread (so does an in-memory `db_path`).',
    }),
    write_worker: Type.Boolean({
      default: true,
      description: 'Write the index on a worker thread with its own connection to `db_path`, so that ' +
        'SQLite\'s writes and commits never hold up watch events, probes or requests, and run on ' +
        'a second core. `false`: writes run on the main thread (so do those of an in-memory `db_path`).',
    }),
    decode_worker: Type.Optional(
      Type.Boolean({
        description: 'Parse the API server\'s watch streams and LIST pages on a worker thread, which sends back only the fields the ' +
          'service reads of each object, so that parsing never holds up requests and probes. It costs more CPU in all ' +
          'than parsing on the main thread (the selected objects are copied back). Unset: on when the service has 4 CPUs ' +
          'or more (its cgroup\'s CPU quota, else its cores), off below, where that CPU would come out of the write worker\'s.',
      }),
    ),
    background_niceness: Type.Integer({
      default: 0,
      minimum: 0,
      maximum: 19,
      description: 'Scheduling niceness (Linux) of the threads that work in the background: the write worker, the checkpointer and the ' +
        'watch decoder. When the CPU is short they yield to the threads that answer requests and probes (the main thread, ' +
        'the read workers), and catch up once it is free; a change then waits longer before the API shows it (on 2 cores ' +
        'with 5,000 events/s, 10 cut the heavy reads\' p99 by 40–50 % and lengthened the lag by 10–40 %). `0`: they compete as equals.',
    }),
    telemetry_enabled: Type.Boolean({
      default: true,
      description: 'Scrape the dcgm-exporter pods for GPU metrics. `false`: the metrics endpoints answer with nulls and no ranking.',
    }),
    scrape_interval_seconds: Seconds(15, 2, 3600, 'How often every dcgm-exporter is scraped. Raw samples are kept ' +
      'for an hour, so this sets their number (and the memory per GPU).'),
    scrape_timeout_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 3599,
        description: 'Longest wait for one exporter\'s answer; must be shorter than `scrape_interval_seconds`. Unset: ' +
          '10, or the interval − 1 when that is shorter. An exporter still answering is skipped by the next tick.',
      }),
    ),
    scrape_concurrency: Type.Integer({ default: 32, minimum: 1, maximum: 1024, description: 'Exporters scraped at the same time.' }),
    scrape_max_bytes: Type.Integer({
      default: 16777216,
      minimum: 1024,
      maximum: 1073741824,
      description: 'Largest exporter payload accepted (after decompression); a larger one fails the scrape as `too_large`.',
    }),
    exporter_selectors: Type.Array(Type.String({ pattern: `${LABEL_KEY.slice(0, -1)}=[A-Za-z0-9._-]{0,63}$` }), {
      default: ['app=nvidia-dcgm-exporter', 'app.kubernetes.io/name=dcgm-exporter'], minItems: 1, uniqueItems: true,
      description: 'Label selectors (`key=value`) of dcgm-exporter pods; a pod matching any of them is scraped at its pod ' +
        'IP. Defaults: the GPU Operator\'s label, then the dcgm-exporter chart\'s. Comma-separated in the env var.',
    }),
    exporter_namespaces: Type.Array(Type.String({ pattern: NAMESPACE }), {
      default: ['gpu-operator', 'nvidia-gpu-operator', 'gpu-operator-resources'],
      uniqueItems: true,
      description: 'The only namespaces where dcgm-exporter pods are trusted, besides `namespace` (the service\'s own): a ' +
        'pod that matches `exporter_selectors` elsewhere is never scraped, so no team can forge another\'s telemetry. ' +
        'Defaults: the GPU Operator\'s usual namespaces. Comma-separated in the env var. docs/telemetry.md, "Trust".',
    }),
    exporter_port: Type.Integer({ default: 9400, minimum: 1, maximum: 65535, description: 'Port of the exporters\' metrics endpoint.' }),
    exporter_path: Type.String({ default: '/metrics', pattern: '^/[^\\s?#]*$', description: 'Path of the exporters\' metrics endpoint.' }),
    lifetime_flush_seconds: Seconds(60, 1, 3600, 'How often the per-workload lifetime totals (`job_lifetime`) ' +
      'are written to the index; also written at shutdown.'),
    idle_threshold_percent: Type.Number({
      default: 5,
      minimum: 0,
      maximum: 100,
      description: 'A GPU is idle in a clock minute when its mean utilization over the minute\'s samples is below this ' +
        '(percent); the workload it is attributed to counts those samples\' seconds as idle GPU time. `0`: no minute is idle.',
    }),
    telemetry_summary_seconds: Seconds(60, 1, 300, 'On PostgreSQL only: width of the per-workload GPU metric summaries the writer of ' +
      'each cluster shares with every replica (docs/scaling.md). A summary is written once its bucket has ' +
      'ended and the scrapes of its last tick are in; windows are answered in whole buckets. Must divide 3600.'),
    capacity_configmaps_enabled: Type.Boolean({
      default: true,
      description: 'Read budgets from the capacity ConfigMaps of `namespace` in the cluster the service runs in (its ' +
        'in-cluster service account, else `kubeconfig`). `false`: no budgets, every organization reports allocated 0.',
    }),
    capacity_label_selector: Type.String({
      default: 'gpucap.io/capacity=true',
      pattern: `${LABEL_KEY.slice(0, -1)}=[A-Za-z0-9._-]{0,63}$`,
      description: 'Label (`key=value`) of the capacity ConfigMaps.',
    }),
    capacity_configmap_key: Type.String({
      default: 'capacity.yaml',
      pattern: '^[-._a-zA-Z0-9]{1,253}$',
      description: 'Key of the capacity ConfigMaps holding the budget file.',
    }),
    prices_configmaps_enabled: Type.Boolean({
      default: true,
      description: 'Read GPU-hour and energy rates from the prices ConfigMaps of `namespace` in the cluster the service runs in (its ' +
        'in-cluster service account, else `kubeconfig`; docs/capacity.md, "Prices"), when `capacity_configmaps_enabled` too. `false`: ' +
        'no prices, no answer carries a cost.',
    }),
    prices_label_selector: Type.String({
      default: 'gpucap.io/prices=true',
      pattern: `${LABEL_KEY.slice(0, -1)}=[A-Za-z0-9._-]{0,63}$`,
      description: 'Label (`key=value`) of the prices ConfigMaps.',
    }),
    prices_configmap_key: Type.String({
      default: 'prices.yaml',
      pattern: '^[-._a-zA-Z0-9]{1,253}$',
      description: 'Key of the prices ConfigMaps holding the price file (GPU-hour and energy rates).',
    }),
    namespace: Type.String({
      default: 'default',
      pattern: NAMESPACE,
      description: 'The service\'s own namespace (capacity and prices ConfigMaps). In a pod, set from the downward API.',
    }),
    default_organization_id: Type.String({
      default: 'default',
      minLength: 1,
      maxLength: 128,
      description: 'Organization of workloads that no namespace label or cluster setting assigns.',
    }),
    jwks_url: Type.Optional(
      Type.String({
        pattern: '^https?://',
        description: 'JWKS URL of the identity provider. Keys are cached and refetched when an unknown `kid` arrives (rotation).',
      }),
    ),
    jwks_file: OptionalPath('Local JWKS file instead of a URL; reloaded when it changes.'),
    jwks_allow_http: Type.Boolean({
      default: false,
      description: 'Accept a plain `http://` `jwks_url` to a host that is not loopback. Keys fetched in the clear can be ' +
        'replaced on the way, and with them every identity: only for a trusted network.',
    }),
    jwt_issuer: Type.Optional(Type.String({ minLength: 1, description: 'Required `iss` of JWTs. Required when JWT is on.' })),
    jwt_audience: Type.Optional(Type.String({ minLength: 1, description: 'Required `aud` of JWTs. Required when JWT is on.' })),
    jwt_algorithms: Type.Array(
      Type.Union([
        Type.Literal('RS256'),
        Type.Literal('RS384'),
        Type.Literal('RS512'),
        Type.Literal('PS256'),
        Type.Literal('PS384'),
        Type.Literal('PS512'),
        Type.Literal('ES256'),
        Type.Literal('ES384'),
        Type.Literal('ES512'),
        Type.Literal('EdDSA'),
      ]),
      {
        default: ['RS256', 'ES256'],
        minItems: 1,
        uniqueItems: true,
        description: 'Accepted JWT signature algorithms (asymmetric only). Comma-separated in the env var.',
      },
    ),
    jwt_clock_tolerance_seconds: Seconds(30, 0, 300, 'Leeway for `exp` and `nbf` against clock skew.'),
    jwks_cache_seconds: Seconds(600, 10, 86400, 'How long fetched JWKS keys are trusted before a refetch.'),
    jwks_cooldown_seconds: Seconds(30, 1, 3600, 'Minimum time between two JWKS fetches triggered by unknown `kid`s.'),
    claim_organization: Type.String({ default: 'org_id', minLength: 1, description: 'JWT claim holding the organization id.' }),
    claim_role: Type.String({ default: 'role', minLength: 1, description: 'JWT claim holding the role (ORG_ADMIN, TEAM_LEAD or MEMBER).' }),
    claim_initiatives: Type.String({ default: 'initiatives', minLength: 1, description: 'JWT claim holding the array of initiative ids.' }),
    api_tokens_file: OptionalPath('API token records (SHA-256 hashes only, YAML or JSON). Re-read when the file changes.'),
    api_tokens_reload_seconds: Seconds(5, 1, 3600, 'How often the API token file is checked for changes.'),
    rate_limit_per_second: Type.Number({
      default: 50,
      minimum: 0,
      maximum: 100000,
      description: 'Sustained requests per second per principal (token bucket refill). 0 turns rate limiting off.',
    }),
    rate_limit_burst: Type.Integer({
      default: 100,
      minimum: 1,
      maximum: 1000000,
      description: 'Requests a principal may send at once (bucket size).',
    }),
    auth_failure_rate_per_second: Type.Number({
      default: 1,
      minimum: 0,
      maximum: 100000,
      description: 'Failed authentications per second a client address may sustain (token bucket refill); beyond it, ' +
        'its requests get 429 with `Retry-After` before any credential is looked at. 0 turns this limit off.',
    }),
    auth_failure_burst: Type.Integer({
      default: 20,
      minimum: 1,
      maximum: 1000000,
      description: 'Failed authentications a client address may have at once (bucket size).',
    }),
    cors_allowed_origins: Type.Array(Type.String({ pattern: '^(\\*|https?://[^/\\s]+)$' }), {
      default: [], uniqueItems: true, description: 'Browser origins allowed to call the API (`https://grafana.example.com`). Empty: no CORS headers. Comma-separated in the env var.',
    }),
    console_enabled: Type.Boolean({
      default: true,
      description: 'Serve the web console at `/` on the API port (assets under `/ui/`; docs/console.md). It reads ' +
        'only the public `/v1` API with the token the user signs in with. `false`: `/` and `/ui/` answer 404.',
    }),
    console_assets_dir: OptionalPath('Folder of the built console (`npm run build` writes `dist/console`). ' +
      'Unset: `dist/console` of the installed service, which the image holds.'),
    shutdown_delay_seconds: Seconds(5, 0, 120, 'On SIGTERM, how long to keep serving with /readyz failing, so Service ' +
      'endpoints and load balancers stop sending traffic before connections are refused.'),
    shutdown_grace_seconds: Seconds(10, 0, 300, 'After that delay, how long in-flight requests may finish before connections are cut.'),
    log_level: Type.Union(
      [
        Type.Literal('fatal'),
        Type.Literal('error'),
        Type.Literal('warn'),
        Type.Literal('info'),
        Type.Literal('debug'),
        Type.Literal('trace'),
        Type.Literal('silent'),
      ],
      {
        default: 'info', description: 'pino log level.',
      },
    ),
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;

/** The scrape timeout in force: the setting, else 10 s capped below the interval. */
export function scrapeTimeoutSeconds(config: Pick<Config, 'scrape_interval_seconds' | 'scrape_timeout_seconds'>): number {
  return config.scrape_timeout_seconds ?? Math.min(10, config.scrape_interval_seconds - 1);
}

/** Where the index lives: db_url when set, else the SQLite file db_path. */
export type DatabaseLocation =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; readUrl: string | undefined };

export function databaseLocation(config: Pick<Config, 'db_url' | 'db_path' | 'db_read_url'>): DatabaseLocation {
  const url = config.db_url;
  if (url === undefined) return { kind: 'sqlite', path: config.db_path };
  if (url.startsWith('sqlite:')) return { kind: 'sqlite', path: url.slice('sqlite:'.length) };
  return { kind: 'postgres', url, readUrl: config.db_read_url };
}

/** The location for logs and errors: a PostgreSQL URL without its password. */
export function describeDatabase(location: DatabaseLocation): string {
  if (location.kind === 'sqlite') return location.path;
  try {
    const url = new URL(location.url);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** This replica's name in writer leases: instance_id, else $HOSTNAME (the pod name), else the host name. */
export function instanceIdOf(config: Pick<Config, 'instance_id'>, env: NodeJS.ProcessEnv, hostname: string): string {
  return config.instance_id ?? (env.HOSTNAME !== undefined && env.HOSTNAME !== '' ? env.HOSTNAME : hostname);
}
