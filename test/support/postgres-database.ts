// A database of its own for each PostgreSQL test, cheaply: one server per mocha process (started on
// first use, about 1.5 s), one template database migrated once, and a copy of it per test
// (CREATE DATABASE … TEMPLATE, tens of ms with fsync off). The server goes down when the process
// exits, through the exit cleanup that startPostgres registers (test/support/exit-cleanup.ts).
//
// The rule of startPostgresOrSkip applies: without PG_BIN a developer's run skips the test, and a CI
// run fails it.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { migrate } from '../../src/store/postgres/migrations/migrate.js';
import { startPostgresOrSkip, type PostgresServer } from './postgres.js';

const TEMPLATE = 'gpucap_template';

let server: Promise<PostgresServer> | undefined;
let template: Promise<void> | undefined;
let databases = 0;

export interface TestDatabase {
  /** postgres://postgres@127.0.0.1:PORT/NAME */
  url: string;
  name: string;
  /** Drops the database, ending any session still connected to it. Safe to call twice. */
  drop(): Promise<void>;
}

export interface FreshDatabaseOptions {
  /** `false`: an empty database, for tests of the migrator itself. Default: migrated to the latest schema. */
  migrated?: boolean;
}

/**
 * The process's shared server. Tests that stop or restart a server must start their own
 * (startPostgresOrSkip): this one is shared by every test of the process.
 */
export async function sharedPostgres(context: Mocha.Context): Promise<PostgresServer> {
  const bin = process.env.PG_BIN;
  // Skips the test or fails the run, and never comes back, when PG_BIN is not set.
  if (bin === undefined || bin === '') return startPostgresOrSkip(context);
  server ??= startPostgresOrSkip(context);
  return server;
}

/** A new database on the shared server, migrated unless asked otherwise. */
export async function freshDatabase(context: Mocha.Context, options: FreshDatabaseOptions = {}): Promise<TestDatabase> {
  const { url } = await sharedPostgres(context);
  const migrated = options.migrated !== false;
  if (migrated) {
    template ??= createTemplate(url);
    await template;
  }
  const name = `t_${++databases}`;
  await admin(url, `CREATE DATABASE ${name} TEMPLATE ${migrated ? TEMPLATE : 'template0'}`);
  let dropped = false;
  return {
    url: databaseUrl(url, name),
    name,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await dropOnceIdle(url, name, 2_000);
    },
  };
}

/** `url` pointing at database `name` instead. */
export function databaseUrl(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function createTemplate(url: string): Promise<void> {
  await admin(url, `CREATE DATABASE ${TEMPLATE}`);
  const client = new pg.Client({ connectionString: databaseUrl(url, TEMPLATE) });
  await client.connect();
  try {
    // The partitions of this month and the next two come with every copy.
    await migrate(client, { now: Date.now() });
  } finally {
    // A template must have no session while it is copied.
    await client.end();
  }
}

/**
 * Drops database `name` once it has no session, or after `withinMs` (FORCE ends what is left). pg's
 * Pool.end() resolves before its sockets close: a session still closing when FORCE terminates it
 * reports an error to a client with no listener left.
 */
async function dropOnceIdle(url: string, name: string, withinMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const deadline = Date.now() + withinMs;
    const sessions = async () =>
      (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name])).rows[0]?.n;
    while ((await sessions()) !== 0 && Date.now() < deadline) await sleep(20);
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Runs one statement on the server's own `gpucap` database (CREATE and DROP DATABASE cannot run in a database they copy or drop). */
async function admin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
