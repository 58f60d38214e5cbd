// Boots the real service for a test: a real index on the test backend (SQLite's file in a temp dir,
// or a fresh PostgreSQL database with GPUCAP_TEST_BACKEND=postgres: test/support/backend.ts), real
// HTTP servers on loopback (port 0), real authenticator reading a real API token file. Tests talk to
// it over HTTP like a user.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Role } from '../../src/access/principal.js';
import { generateApiToken, hashApiToken } from '../../src/auth/token-format.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/start-service.js';
import { testIndexLocation, type TestIndexLocation } from './backend.js';
import { FixedClock } from './fixed-clock.js';
import { makeTempDir } from './temp-dir.js';

/** A parsed JSON response body: tests index into it freely and assert on what they find. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonBody = any;

export interface Caller {
  token: string;
  organizationId: string;
}

export interface TestService {
  url: string;
  adminUrl: string;
  service: RunningService;
  clock: FixedClock;
  dir: string;
  callers: Record<'admin' | 'lead' | 'member' | 'otherOrgAdmin' | 'noTeams', Caller>;
  get(path: string, options?: RequestOptions): Promise<{ status: number; headers: Headers; body: JsonBody }>;
  /** The same request, its body as text (CSV). */
  getText(path: string, options?: RequestOptions): Promise<{ status: number; headers: Headers; text: string }>;
  /** GET /readyz on the admin port: its status and JSON body. */
  readyz(): Promise<{ status: number; body: JsonBody }>;
  stop(): Promise<void>;
}

export interface RequestOptions {
  as?: Caller | null;
  org?: string | null;
  headers?: Record<string, string>;
}

export const NOW = '2026-11-20T12:00:00Z';

function tokenRecord(id: string, token: string, organizationId: string, role: Role, initiatives: string[]) {
  return { id, sha256: hashApiToken(token), organization_id: organizationId, role, initiatives };
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  /** The fixed clock's start (default NOW). */
  now?: string;
  /**
   * 'system' runs the service on the real clock (tests against a real or simulated Kubernetes API,
   * whose timestamps are real); `clock` is then not wired to the service.
   */
  clock?: 'fixed' | 'system';
  logger?: Logger;
  /** Reflector timeouts and backoff (tests against a simulated API shorten them). */
  informers?: ServiceOptions['informers'];
  /**
   * The index to open (default: a new one on the test backend, removed by stop()). A test that
   * restarts the service on the same index makes one with testIndexLocation and removes it itself.
   */
  index?: TestIndexLocation;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const temp = makeTempDir();
  const clock = new FixedClock(Date.parse(options.now ?? NOW));
  const callers = {
    admin: { token: generateApiToken(), organizationId: 'acme' },
    lead: { token: generateApiToken(), organizationId: 'acme' },
    member: { token: generateApiToken(), organizationId: 'acme' },
    otherOrgAdmin: { token: generateApiToken(), organizationId: 'globex' },
    noTeams: { token: generateApiToken(), organizationId: 'acme' },
  };
  const tokensFile = join(temp.path, 'tokens.json');
  writeFileSync(
    tokensFile,
    JSON.stringify({
      tokens: [
        tokenRecord('admin', callers.admin.token, 'acme', 'ORG_ADMIN', []),
        tokenRecord('lead', callers.lead.token, 'acme', 'TEAM_LEAD', ['llm', 'vision']),
        tokenRecord('member', callers.member.token, 'acme', 'MEMBER', ['vision']),
        tokenRecord('other-org-admin', callers.otherOrgAdmin.token, 'globex', 'ORG_ADMIN', []),
        tokenRecord('no-teams', callers.noTeams.token, 'acme', 'MEMBER', []),
      ],
    }),
  );
  const location = options.index ?? (await testIndexLocation(temp.path));
  const removeAll = async () => {
    if (options.index === undefined) await location.remove();
    temp.remove();
  };
  let service: RunningService;
  try {
    const config = loadConfig({
      ...location.env,
      GPUCAP_LISTEN: '127.0.0.1:0',
      GPUCAP_ADMIN_LISTEN: '127.0.0.1:0',
      GPUCAP_API_TOKENS_FILE: tokensFile,
      GPUCAP_RATE_LIMIT_PER_SECOND: '0',
      GPUCAP_AUTH_FAILURE_RATE_PER_SECOND: '0',
      GPUCAP_ADMIN_AUTH: 'none',
      GPUCAP_SHUTDOWN_GRACE_SECONDS: '2',
      GPUCAP_SHUTDOWN_DELAY_SECONDS: '0',
      // Most tests seed the index directly; those that watch a cluster turn it on with a kubeconfig.
      GPUCAP_HOME_CLUSTER_ENABLED: 'false',
      GPUCAP_CAPACITY_CONFIGMAPS_ENABLED: 'false',
      // Reads on the main thread: a worker pool costs about a second to start under tsx, in every test
      // service. test/store/sqlite/threads/read-pool-service.test.ts runs the service with its workers.
      GPUCAP_READ_WORKERS: '0',
      ...options.env,
    });
    service = await startService(config, { clock: options.clock === 'system' ? systemClock : clock, logger: options.logger ?? pino({ level: 'silent' }), informers: options.informers });
  } catch (error) {
    await removeAll();
    throw error;
  }
  const url = `http://${service.apiAddress}`;
  const getText = async (path: string, { as = callers.admin, org, headers = {} }: RequestOptions = {}) => {
    const all: Record<string, string> = { ...headers };
    if (as) all.Authorization = `Bearer ${as.token}`;
    const organization = org === undefined ? as?.organizationId : org;
    if (organization !== null && organization !== undefined) all['X-Organization-Id'] = organization;
    const response = await fetch(url + path, { headers: all });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  return {
    url,
    adminUrl: `http://${service.adminAddress}`,
    service,
    clock,
    dir: temp.path,
    callers,
    async get(path, options) {
      const { status, headers, text } = await getText(path, options);
      return { status, headers, body: text ? JSON.parse(text) : undefined };
    },
    getText,
    async readyz() {
      const response = await fetch(`http://${service.adminAddress}/readyz`);
      return { status: response.status, body: await response.json() };
    },
    async stop() {
      try {
        await service.stop();
      } finally {
        await removeAll();
      }
    },
  };
}
