/**
 * `capture.updated` events coalesced (issue 20): PostgreSQL takes its notification queue's lock
 * once per committing transaction that notified, and with hundreds of agents streaming at once
 * the events of each capture, each in a transaction of its own, were the only lock waits over
 * 100 ms left. A replica now sends every capture due in one transaction, each capture once, and
 * with them the events agents cause together (`agent.connection`).
 */
import { randomUUID } from 'node:crypto';
import type { DashboardEvent } from '@spectator/shared';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { parseConfig } from '../src/config/config';
import type { Runtime } from '../src/config/runtime';
import { createDataSource } from '../src/database/data-source';
import { EventsRepository } from '../src/events/events.repository';
import { EventsService } from '../src/events/events.service';
import { startTestBackend, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';

let backend: TestBackend;
let ds: DataSource;
let events: EventsService;
const projects: string[] = [];

beforeAll(async () => {
  backend = await startTestBackend();
  for (const slug of ['coalesced-a', 'coalesced-b']) {
    const project = await backend.api<{ id: string }>('POST', '/projects', { slug, name: slug });
    projects.push(project.body.id);
  }
  ds = createDataSource(backend.databaseUrl, { poolSize: 2 });
  await ds.initialize();
  const runtime = {
    config: parseConfig({}),
    databaseUrl: backend.databaseUrl,
    log: pino({ level: 'silent' }),
  } as Runtime;
  events = new EventsService(new EventsRepository(ds), runtime);
  await events.onModuleInit();
});
afterAll(async () => {
  await events?.onModuleDestroy();
  await ds?.destroy();
  await backend?.close();
});

describe('capture.updated', () => {
  it('goes out once per capture, every capture due in one transaction, to each project its own', async () => {
    const heard = new Map<string, DashboardEvent[]>(projects.map((id) => [id, []]));
    const unsubscribe = projects.map((id) => events.subscribe(id, (event) => heard.get(id)!.push(event)));
    const [a, b] = projects as [string, string];
    const captures = { [a]: [randomUUID(), randomUUID(), randomUUID()], [b]: [randomUUID(), randomUUID()] };
    try {
      // Many batches of five captures in a burst, as agents of one build send them.
      for (let round = 0; round < 3; round++)
        for (const project of projects)
          for (const captureId of captures[project]!) events.captureChanged(project, captureId);
      const ids = (project: string): string[] =>
        heard
          .get(project)!
          .flatMap((event) => (event.type === 'capture.updated' ? [event.captureId] : []))
          .sort();
      await eventually(
        () => projects.map(ids),
        ([first, second]) => first!.length >= 3 && second!.length >= 2,
      );
      expect(ids(a)).toEqual([...captures[a]!].sort());
      expect(ids(b)).toEqual([...captures[b]!].sort());
      // Stored (and notified) by one transaction: the rows share the inserting transaction id.
      const [stored] = (await ds.query(
        `SELECT count(*)::int AS events, count(DISTINCT xmin::text)::int AS transactions FROM dashboard_events
          WHERE event::jsonb->>'captureId' = ANY($1::text[])`,
        [[...captures[a]!, ...captures[b]!]],
      )) as Array<{ events: number; transactions: number }>;
      expect(stored).toEqual({ events: 5, transactions: 1 });
    } finally {
      for (const stop of unsubscribe) stop();
    }
  });
});

describe('events many agents cause at once (publishSoon)', () => {
  it('go out in the order given, with the capture updates due, in one transaction', async () => {
    const heard = new Map<string, DashboardEvent[]>(projects.map((id) => [id, []]));
    const unsubscribe = projects.map((id) => events.subscribe(id, (event) => heard.get(id)!.push(event)));
    const [a, b] = projects as [string, string];
    // Pods of two Deployments starting and stopping together: each agent connects, then disconnects.
    const agents = { [a]: [randomUUID(), randomUUID(), randomUUID()], [b]: [randomUUID()] };
    const captureId = randomUUID();
    try {
      for (const connected of [true, false])
        for (const project of projects)
          for (const agentId of agents[project]!)
            events.publishSoon(project, { type: 'agent.connection', agentId, connected });
      events.captureChanged(a, captureId);
      const connections = (project: string): Array<[string, boolean]> =>
        heard
          .get(project)!
          .flatMap((event) => (event.type === 'agent.connection' ? [[event.agentId, event.connected]] : []));
      await eventually(
        () => projects.map(connections),
        ([first, second]) => first!.length >= 6 && second!.length >= 2,
      );
      // Each agent's connect before its disconnect, each once, to its own project only.
      for (const project of projects)
        expect(connections(project)).toEqual([
          ...agents[project]!.map((agentId): [string, boolean] => [agentId, true]),
          ...agents[project]!.map((agentId): [string, boolean] => [agentId, false]),
        ]);
      const [stored] = (await ds.query(
        `SELECT count(*)::int AS events, count(DISTINCT xmin::text)::int AS transactions FROM dashboard_events
          WHERE event::jsonb->>'agentId' = ANY($1::text[]) OR event::jsonb->>'captureId' = $2`,
        [[...agents[a]!, ...agents[b]!], captureId],
      )) as Array<{ events: number; transactions: number }>;
      expect(stored).toEqual({ events: 9, transactions: 1 });
    } finally {
      for (const stop of unsubscribe) stop();
    }
  });
});
