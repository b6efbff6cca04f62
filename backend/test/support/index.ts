import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { RunningBackend } from '../../src/backend';
import type { BackendOptions } from '../../src/config/config';
import { createDataSource } from '../../src/database/data-source';
import { migrateUp } from '../../src/database/migrate';
import { TEST_PG_ENV, TEST_PG_TEMPLATE_ENV } from './global-setup';

/** A database of its own for one test file. */
export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database (closing its connections). */
  drop(): Promise<void>;
}

function adminUrl(): string {
  const url = process.env[TEST_PG_ENV];
  if (!url)
    throw new Error(`${TEST_PG_ENV} is not set: run through jest (globalSetup starts PostgreSQL) or set DATABASE_URL`);
  return url;
}

async function withAdminClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a fresh database on the test run's PostgreSQL: empty, or with `migrated` a copy of the
 * run's template with every migration applied (globalSetup makes it; without one it is empty too,
 * and the caller's migrations fill it).
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `spectator_test_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? process.env[TEST_PG_TEMPLATE_ENV] : undefined;
  await withAdminClient((client) =>
    client.query(`CREATE DATABASE ${name}${template === undefined ? '' : ` TEMPLATE ${template}`}`),
  );
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withAdminClient((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** A fresh database with every migration applied, and a data source of two connections on it. */
export interface MigratedDatabase {
  ds: DataSource;
  /** Closes the data source and drops the database. */
  close(): Promise<void>;
}

/** A fresh migrated database (a copy of the run's template; migrateUp applies whatever it lacks), for tests of the schema and of repositories' SQL. */
export async function createMigratedDatabase(): Promise<MigratedDatabase> {
  const database = await createTestDatabase({ migrated: true });
  const ds = createDataSource(database.url, { poolSize: 2 });
  await ds.initialize();
  await migrateUp(ds);
  return {
    ds,
    close: async () => {
      await ds.destroy();
      await database.drop();
    },
  };
}

/** A real backend on port 0 for a test. */
export interface TestBackend extends RunningBackend {
  databaseUrl: string;
  /** `fetch` against the backend with the admin token (or `token`), JSON in and out. */
  api<T = unknown>(method: string, route: string, body?: unknown, token?: string): Promise<{ status: number; body: T }>;
}

/** The database of each test backend running in this process, by its URL (see `databaseUrlOf`). */
const databases = new Map<string, string>();

/** The database URL of a test backend started in this process, from its URL. @throws when none was. */
export function databaseUrlOf(backendUrl: string): string {
  const url = databases.get(backendUrl);
  if (url === undefined) throw new Error(`no test backend of this process answers at ${backendUrl}`);
  return url;
}

/**
 * Starts a backend on 127.0.0.1:0 with migrations. Without `databaseUrl` it gets a fresh database
 * (dropped on close); give the same `databaseUrl` to two calls for two replicas on one database.
 */
export async function startTestBackend(options: BackendOptions & { databaseUrl?: string } = {}): Promise<TestBackend> {
  const database = options.databaseUrl === undefined ? await createTestDatabase({ migrated: true }) : null;
  const databaseUrl = options.databaseUrl ?? (database as TestDatabase).url;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'spectator-test-data-')));
  let running: RunningBackend;
  try {
    // Required here, not imported at the top: the whole application (NestJS and every module, about
    // 1.2 CPU-s in each test file's module registry) is loaded only by the files that start a backend.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy require, for the reason above
    const { startBackend } = require('../../src/backend') as typeof import('../../src/backend');
    running = await startBackend({
      port: 0,
      host: '127.0.0.1',
      logLevel: process.env.SPECTATOR_TEST_LOG_LEVEL ?? 'silent',
      adminToken: options.adminToken ?? `test-admin-${randomBytes(12).toString('hex')}`,
      dashboardDir: path.join(dataDir, 'no-dashboard'),
      // Test receivers listen on loopback, which webhooks do not reach unless allowed.
      webhookAllow: ['127.0.0.0/8', '::1'],
      // Each pool opens its connections as asked for (~150 ms of PostgreSQL CPU a start saved).
      openPoolsAtStart: false,
      ...options,
      databaseUrl,
      dataDir,
    });
  } catch (error) {
    // Its port taken (a caller starts it again on another) or its database refused: nothing left behind.
    await database?.drop();
    if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  databases.set(running.url, databaseUrl);
  return {
    ...running,
    databaseUrl,
    api: (method, route, body, token) => apiCall(running.url, token ?? running.adminToken, method, route, body),
    close: async () => {
      databases.delete(running.url);
      await running.close();
      await database?.drop();
      if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A second replica of `of`: another backend on the same database with the same admin token. */
export function startTestReplica(of: TestBackend, options: BackendOptions = {}): Promise<TestBackend> {
  return startTestBackend({ ...options, databaseUrl: of.databaseUrl, adminToken: of.adminToken });
}

/** One JSON call to the management API (`route` under `/api/v1`, or absolute from `/`). */
export async function apiCall<T = unknown>(
  baseUrl: string,
  token: string | null,
  method: string,
  route: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const url = `${baseUrl}${route.startsWith('/api/') || route === '/metrics' ? route : `/api/v1${route}`}`;
  const response = await fetch(url, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T };
}

/** Runs one statement on a test backend's database (to age a row, read what is stored). */
export async function sqlOn<T>(databaseUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}
