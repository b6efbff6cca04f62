/**
 * Dashboard events between replicas (issue 20): events published inside a transaction are stored
 * with it and notified after its commit by the replica, gathered with the others it committed
 * meanwhile, so the transaction itself never takes PostgreSQL's notification lock at its commit.
 * The other replica still hears every committed event, in order, and none rolled back.
 */
import type { DashboardEvent } from '@spectator/shared';
import pg from 'pg';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import type { Runtime } from '../src/config/runtime';
import { createDataSource } from '../src/database/data-source';
import { EVENTS_CHANNEL, EventsRepository } from '../src/events/events.repository';
import { EventsService } from '../src/events/events.service';
import { startTestBackend, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';

let backend: TestBackend;
let projectId: string;
/** Replica A's pool, the pool its transactions run on (as the folds' own), and replica B's pool. */
let poolA: DataSource;
let foldsA: DataSource;
let poolB: DataSource;
let replicaA: EventsService;
let replicaB: EventsService;
/** A plain listener on the channel: each notification's payload and the backend process that sent it. */
let listener: pg.Client;
const notified: Array<{ id: string; pid: number }> = [];
/** Events heard by a dashboard of the project on replica B, in order. */
const heard: DashboardEvent[] = [];

function runtimeOf(databaseUrl: string): Runtime {
  return { databaseUrl, log: pino({ level: 'silent' }) } as unknown as Runtime;
}

const hinted = (n: number): DashboardEvent => ({ type: 'paths.hinted', template: `/t${n}/{id}`, regrouped: n });

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'events', name: 'Events' })).status).toBe(201);
  poolA = createDataSource(backend.databaseUrl, { poolSize: 2 });
  foldsA = createDataSource(backend.databaseUrl, { poolSize: 8 });
  poolB = createDataSource(backend.databaseUrl, { poolSize: 2 });
  await Promise.all([poolA.initialize(), foldsA.initialize(), poolB.initialize()]);
  const [project] = (await poolA.query("SELECT id FROM projects WHERE slug = 'events'")) as Array<{ id: string }>;
  projectId = project!.id;
  replicaA = new EventsService(new EventsRepository(poolA), runtimeOf(backend.databaseUrl));
  replicaB = new EventsService(new EventsRepository(poolB), runtimeOf(backend.databaseUrl));
  await Promise.all([replicaA.onModuleInit(), replicaB.onModuleInit()]);
  replicaB.subscribe(projectId, (event) => heard.push(event));
  listener = new pg.Client({ connectionString: backend.databaseUrl });
  listener.on('notification', (message) => notified.push({ id: message.payload ?? '', pid: message.processId }));
  await listener.connect();
  await listener.query(`LISTEN ${EVENTS_CHANNEL}`);
});

afterAll(async () => {
  await listener?.end();
  await replicaA?.onModuleDestroy();
  await replicaB?.onModuleDestroy();
  await Promise.all([poolA, foldsA, poolB].map((pool) => pool?.destroy()));
  await backend?.close();
});

describe('dashboard events published in a transaction', () => {
  it('reach the other replica after the commit, in order, and are notified by the replica, not the transaction', async () => {
    const pids: number[] = [];
    // Twenty transactions at once on the folds' pool, each publishing three events; the tenth rolls back.
    await Promise.all(
      Array.from({ length: 20 }, (_, t) =>
        foldsA
          .transaction(async (manager) => {
            const [session] = (await manager.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
            pids.push(session!.pid);
            await replicaA.publishWithin(
              manager,
              [0, 1, 2].map((i) => ({ projectId, event: hinted(t * 3 + i) })),
            );
            if (t === 9) throw new Error('rolled back');
          })
          .catch((error: unknown) => {
            if (!(error instanceof Error) || error.message !== 'rolled back') throw error;
          }),
      ),
    );
    const committed = Array.from({ length: 20 }, (_, t) => t)
      .filter((t) => t !== 9)
      .flatMap((t) => [0, 1, 2].map((i) => t * 3 + i));
    await eventually(
      () => heard.length,
      (n) => n >= committed.length,
    );
    // Every committed event once, none of the rolled-back transaction's; each transaction's in its order.
    const regrouped = heard.map((event) => (event.type === 'paths.hinted' ? event.regrouped : -1));
    expect([...regrouped].sort((a, b) => a - b)).toEqual(committed);
    for (let t = 0; t < 20; t++) {
      const mine = regrouped.filter((n) => Math.floor(n / 3) === t);
      expect(mine).toEqual(t === 9 ? [] : [t * 3, t * 3 + 1, t * 3 + 2]);
    }
    // No transaction notified: every notification came from another session (replica A's own pool).
    expect(notified.length).toBe(committed.length);
    expect(notified.filter((note) => pids.includes(note.pid))).toEqual([]);
  });
});
