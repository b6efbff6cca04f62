/**
 * What the backend benchmarks share: a throwaway embedded PostgreSQL and a real backend on it, a
 * pool for seeding, a JSON client with the admin token, and the statistics they print.
 */
import { fingerprint, inferShape, LatencyHistogram, type Shape, type WireObservation } from '@spectator/shared';
import type { RunningBackend } from '../src/backend';
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startBackend } from '../src/backend';
import { startEmbeddedPostgres } from '../src/database/embedded';

/** The bodies the benches send: a post as created, as answered, and a request that drifts from the first. */
export const requestShape = inferShape({ title: 't', author: 'a' });
export const responseShape = inferShape({ id: 1, title: 't', author: 'a' });
export const driftShape = inferShape({ title: 't', author: 'a', draft: true });
/** Those shapes by fingerprint, as the shapes table holds them. */
export const SHAPES: Record<string, Shape> = Object.fromEntries(
  [requestShape, responseShape, driftShape].map((shape) => [fingerprint(shape), shape]),
);

/** The `p`th percentile (nearest rank) of `values`. */
/** One row of the benches' traffic as the agent sends it: `POST /r{i}`, 201 (400 when `failed`), `count` exchanges. */
export function postRow(i: number, failed: boolean, count: number, now: string): WireObservation {
  return {
    method: 'POST',
    path: `/r${i}`,
    status: failed ? 400 : 201,
    query: [],
    requestHeaders: ['content-type'],
    responseHeaders: ['content-type'],
    request: { contentType: 'application/json', shape: fingerprint(requestShape) },
    response: failed ? null : { contentType: 'application/json', shape: fingerprint(responseShape) },
    count,
    firstSeen: now,
    lastSeen: now,
  };
}

/** A bench setting from the environment: a positive whole number, `fallback` when unset. */
export function positiveSetting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number, not ${raw}`);
  return value;
}

/** A small deterministic generator (a 31-bit linear congruential one), so every run sends the same traffic. */
export function random(seed: number): () => number {
  let state = seed % 2_147_483_647 || 1;
  return () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
}

/** Clients the scale bench's agents name (pseudonyms, as agents started with `--consumer` send them). */
const CONSUMERS = 40;
const pseudonymOf = (client: number): string => client.toString(16).padStart(16, 'c');

/**
 * One batch's rows as the scale bench's agents send them: `rows` distinct endpoints of `endpoints`
 * (`postRow`: mostly 201, some 400 without a body), timings for each, 1–3 of CONSUMERS clients.
 */
export function scaleRows(seed: number, rows: number, endpoints: number): WireObservation[] {
  const next = random(seed);
  const picked = new Set<number>();
  while (picked.size < rows) picked.add(Math.floor(next() * endpoints));
  return rowsOfEndpoints(next, [...picked]);
}

/** Rows as `scaleRows` makes them, of the endpoints given (`/r{i}`), e.g. all of them to warm a capture. */
export function scaleRowsOf(seed: number, endpoints: readonly number[]): WireObservation[] {
  return rowsOfEndpoints(random(seed), endpoints);
}

function rowsOfEndpoints(next: () => number, endpoints: readonly number[]): WireObservation[] {
  const now = new Date().toISOString();
  return endpoints.map((i): WireObservation => {
    const count = 1 + Math.floor(next() * 20);
    const ttfb = new LatencyHistogram();
    const ttlb = new LatencyHistogram();
    for (let k = 0; k < count; k++) {
      const ms = 2 + next() * 60;
      ttfb.record(ms);
      ttlb.record(ms + next() * 5);
    }
    const failed = next() < 0.1;
    // 1–3 clients share the calls; one row in twenty has calls of clients past the agent's bound.
    const named = new Map<string, number>();
    const overflow = count > 1 && next() < 0.05 ? 1 : 0;
    const clients = 1 + Math.floor(next() * 3);
    const first = Math.floor(next() * CONSUMERS);
    for (let k = 0; k < count - overflow; k++) {
      const client = pseudonymOf((first + Math.floor(next() * clients)) % CONSUMERS);
      named.set(client, (named.get(client) ?? 0) + 1);
    }
    return {
      ...postRow(i, failed, count, now),
      runtime: { ttfb: ttfb.toWire(), ttlb: ttlb.toWire() },
      consumers: [...named].map(([id, calls]) => ({ id, count: calls, lastSeen: now })),
      ...(overflow > 0 ? { consumersOverflow: overflow } : {}),
    };
  });
}

/** The load average (1, 5, 15 minutes) as benches print it beside their figures. */
export const loadAverage = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export const percentile = (values: readonly number[], p: number): number =>
  [...values].sort((a, b) => a - b)[
    Math.min(values.length - 1, Math.max(0, Math.ceil((p / 100) * values.length) - 1))
  ] as number;
export const median = (values: readonly number[]): number => percentile(values, 50);

export interface BenchBackend {
  backend: RunningBackend;
  pool: pg.Pool;
  /** A management API call with the admin token; throws on a non-2xx answer, naming the route. */
  api<T>(method: string, route: string, body?: unknown): Promise<T>;
}

/** Runs `bench` against a fresh database and backend, and always cleans both up. */
export async function withBenchBackend(poolSize: number, bench: (b: BenchBackend) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bench-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own user
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), persistent: false });
  const backend = await startBackend({
    port: 0,
    databaseUrl: database.url,
    dataDir: dir,
    adminToken: `bench-${randomUUID()}`,
    logLevel: 'warn',
    dashboardDir: dir,
  });
  const pool = new pg.Pool({ connectionString: database.url, max: poolSize });
  const api = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${backend.url}/api/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${backend.adminToken}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer: unknown = await response.json();
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(answer)}`);
    return answer as T;
  };
  try {
    await bench({ backend, pool, api });
  } finally {
    await pool.end();
    await backend.close();
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs a bench's main; a failure is printed and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}

/** What an observation row takes from its capture: the project and the partition key. */
interface CaptureKey {
  projectId: string;
  createdAt: Date;
}

/** Each plain capture's project and creation time, read once (a writer knows the capture it writes for). */
const keysOfCaptures = new Map<string, CaptureKey>();

async function keyOfCapture(client: pg.ClientBase, captureId: string): Promise<CaptureKey> {
  let key = keysOfCaptures.get(captureId);
  if (key === undefined) {
    const { rows } = await client.query<CaptureKey>(
      'SELECT project_id AS "projectId", created_at AS "createdAt" FROM captures WHERE id = $1',
      [captureId],
    );
    key = rows[0] as CaptureKey;
    keysOfCaptures.set(captureId, key);
  }
  return key;
}

/** The observations' aggregate key as an `ON CONFLICT` target names it (the batch statement's arbiter). */
export const OBSERVATIONS_CONFLICT = `(capture_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                  (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')), project_id, capture_created_at)`;

/**
 * The plain contender of the ingest benches: one batch's rows written to a capture's observations
 * by one multi-row INSERT … ON CONFLICT in its own transaction, rows folded by key first as any
 * correct writer must (ON CONFLICT cannot touch a row twice) and sorted (one lock order).
 */
export async function plainInsert(
  client: pg.ClientBase,
  captureId: string,
  rows: readonly WireObservation[],
  conflict = OBSERVATIONS_CONFLICT,
): Promise<void> {
  const capture = await keyOfCapture(client, captureId);
  const folded = new Map<string, WireObservation>();
  for (const row of rows) {
    const key = `${row.path} ${row.status}`;
    const before = folded.get(key);
    if (before) before.count += row.count;
    else folded.set(key, { ...row });
  }
  const values: unknown[] = [];
  const tuples = [...folded.values()]
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.status - y.status))
    .map((row) => {
      const base = values.length;
      values.push(
        capture.projectId,
        captureId,
        capture.createdAt,
        row.method,
        row.path,
        row.status,
        row.request?.contentType,
        row.request?.shape,
        row.response?.contentType,
        row.response?.shape,
        row.count,
        row.firstSeen,
        row.lastSeen,
      );
      return `(${Array.from({ length: 13 }, (_, k) => `$${base + k + 1}`).join(', ')})`;
    });
  await client.query('BEGIN');
  await client.query(
    `INSERT INTO observations AS o (project_id, capture_id, capture_created_at, method, path, status, request_content_type, request_shape, response_content_type, response_shape, count, first_seen, last_seen)
     VALUES ${tuples.join(', ')}
     ON CONFLICT ${conflict}
     DO UPDATE SET count = o.count + EXCLUDED.count, last_seen = greatest(o.last_seen, EXCLUDED.last_seen)`,
    values,
  );
  await client.query('COMMIT');
}
