// The one source of truth for configuration: every key, its type, default and meaning.
// YAML key `foo_bar` in GPUCAP_CONFIG is overridden by env var GPUCAP_FOO_BAR. docs/configuration.md
// is generated from this schema (npm run docs:config) and a test fails when the two drift.
import { Type, type Static } from '@sinclair/typebox';

// host:port with a port 0-65535 (0: any free port).
const PORT = '(6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|\\d{1,4})';
const HostPort = (def: string, description: string) =>
  Type.String({ default: def, pattern: `^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+):${PORT}$`, description });
const OptionalPath = (description: string) => Type.Optional(Type.String({ minLength: 1, description }));
const Seconds = (def: number, min: number, max: number, description: string) =>
  Type.Integer({ default: def, minimum: min, maximum: max, description });

export const ConfigSchema = Type.Object(
  {
    listen: HostPort('0.0.0.0:8080', 'Address of the API (`/v1`).'),
    admin_listen: HostPort('0.0.0.0:9090', 'Address of the admin server (`/livez`, `/readyz`, `/metrics`). Keep it off the public Service.'),
    db_path: Type.String({ default: './data/index.db', minLength: 1, description: 'SQLite index file. Its folder is created when missing. The image sets `/var/lib/gpu-capacity-api/index.db`.' }),
    retention_days: Seconds(400, 1, 36500, 'Days a finished workload stays in the index after it completed.'),
    cluster_id: Type.String({ default: 'local', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$', description: 'Id of the home cluster, shown as `cluster_id` of its workloads.' }),
    kubeconfig: OptionalPath('Kubeconfig of the home cluster. Unset: the in-cluster service account, else `$KUBECONFIG`, else `~/.kube/config`.'),
    remote_kubeconfig_dir: OptionalPath('Folder of kubeconfig files, one extra cluster each; watched for files added and removed.'),
    namespace: Type.String({ default: 'default', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$', description: 'The service\'s own namespace (capacity ConfigMaps). In a pod, set from the downward API.' }),
    default_organization_id: Type.String({ default: 'default', minLength: 1, maxLength: 128, description: 'Organization of workloads that no namespace label or cluster setting assigns.' }),
    jwks_url: Type.Optional(Type.String({ pattern: '^https?://', description: 'JWKS URL of the identity provider. Keys are cached and refetched when an unknown `kid` arrives (rotation).' })),
    jwks_file: OptionalPath('Local JWKS file instead of a URL; reloaded when it changes.'),
    jwt_issuer: Type.Optional(Type.String({ minLength: 1, description: 'Required `iss` of JWTs. Required when JWT is on.' })),
    jwt_audience: Type.Optional(Type.String({ minLength: 1, description: 'Required `aud` of JWTs. Required when JWT is on.' })),
    jwt_algorithms: Type.Array(Type.Union([Type.Literal('RS256'), Type.Literal('RS384'), Type.Literal('RS512'), Type.Literal('PS256'), Type.Literal('PS384'), Type.Literal('PS512'), Type.Literal('ES256'), Type.Literal('ES384'), Type.Literal('ES512'), Type.Literal('EdDSA')]), {
      default: ['RS256', 'ES256'], minItems: 1, uniqueItems: true, description: 'Accepted JWT signature algorithms (asymmetric only). Comma-separated in the env var.',
    }),
    jwt_clock_tolerance_seconds: Seconds(30, 0, 300, 'Leeway for `exp` and `nbf` against clock skew.'),
    jwks_cache_seconds: Seconds(600, 10, 86400, 'How long fetched JWKS keys are trusted before a refetch.'),
    jwks_cooldown_seconds: Seconds(30, 1, 3600, 'Minimum time between two JWKS fetches triggered by unknown `kid`s.'),
    claim_organization: Type.String({ default: 'org_id', minLength: 1, description: 'JWT claim holding the organization id.' }),
    claim_role: Type.String({ default: 'role', minLength: 1, description: 'JWT claim holding the role (ORG_ADMIN, TEAM_LEAD or MEMBER).' }),
    claim_initiatives: Type.String({ default: 'initiatives', minLength: 1, description: 'JWT claim holding the array of initiative ids.' }),
    api_tokens_file: OptionalPath('API token records (SHA-256 hashes only, YAML or JSON). Re-read when the file changes.'),
    api_tokens_reload_seconds: Seconds(5, 1, 3600, 'How often the API token file is checked for changes.'),
    rate_limit_per_second: Type.Number({ default: 50, minimum: 0, maximum: 100000, description: 'Sustained requests per second per principal (token bucket refill). 0 turns rate limiting off.' }),
    rate_limit_burst: Type.Integer({ default: 100, minimum: 1, maximum: 1000000, description: 'Requests a principal may send at once (bucket size).' }),
    cors_allowed_origins: Type.Array(Type.String({ pattern: '^(\\*|https?://[^/\\s]+)$' }), {
      default: [], uniqueItems: true, description: 'Browser origins allowed to call the API (`https://grafana.example.com`). Empty: no CORS headers. Comma-separated in the env var.',
    }),
    scrape_interval_seconds: Seconds(15, 1, 3600, 'Interval of the dcgm-exporter sampler.'),
    shutdown_delay_seconds: Seconds(5, 0, 120, 'On SIGTERM, how long to keep serving with /readyz failing, so Service endpoints and load balancers stop sending traffic before connections are refused.'),
    shutdown_grace_seconds: Seconds(10, 0, 300, 'After that delay, how long in-flight requests may finish before connections are cut.'),
    log_level: Type.Union([Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')], {
      default: 'info', description: 'pino log level.',
    }),
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;
