/**
 * Folds of two rows that move one proposal (issue 20): a fold records a proposal's step (and so
 * holds the proposal's row until it commits) only at its end, after the runtime minutes and
 * consumer days it also writes, so a fold of another row reaching another step of the same
 * proposal does not wait for the first fold's heavy writes (the scale bench logged a 179 ms wait
 * on `UPDATE proposals SET status`). Steps still move once, never back.
 */
import type { TokenResponse } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditRepository } from '../src/audit/audit.repository';
import { AuditService } from '../src/audit/audit.service';
import { CapturesRepository } from '../src/captures/captures.repository';
import { ShapeStore } from '../src/captures/shape-store';
import { createDataSource } from '../src/database/data-source';
import { storeEvents } from '../src/events/events.repository';
import type { EventsService } from '../src/events/events.service';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { EvidenceService, type QueuedFoldListener } from '../src/evidence/evidence.service';
import { packList } from '../src/evidence/queued-payload';
import { ProposalLifecycle } from '../src/proposals/proposal-lifecycle';
import { ProposalsRepository } from '../src/proposals/proposals.repository';
import { VersionStore } from '../src/versions/version-store';
import type { EventProject } from '../src/webhooks/notifier';
import { Notifier } from '../src/webhooks/notifier';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import { createTestDatabase, startTestBackend, type TestDatabase } from './support';
import { eventually } from './support/evidence-helpers';

let database: TestDatabase;
let ds: DataSource;
let evidence: EvidenceService;
let project: EventProject;

beforeAll(async () => {
  database = await createTestDatabase();
  // A backend migrates, documents GET /items (approved: its proposal waits for the evidence steps)
  // and stops, so no folder of its own takes the batches queued here.
  const backend = await startTestBackend({ databaseUrl: database.url });
  try {
    expect((await backend.api('POST', '/projects', { slug: 'steps', name: 'Steps' })).status).toBe(201);
    expect(
      (await backend.api<TokenResponse>('POST', '/projects/steps/tokens', { name: 'a', scope: 'agent' })).status,
    ).toBe(201);
    const imported = await backend.api('POST', '/projects/steps/openapi/import?approve=true', {
      openapi: '3.1.0',
      info: { title: 'steps', version: '1' },
      paths: { '/items': { get: { responses: { '200': { description: 'the items' } } } } },
    });
    expect(imported.status).toBe(201);
  } finally {
    await backend.close();
  }
  ds = createDataSource(database.url, 4);
  await ds.initialize();
  const stored = {
    publishWithin: async (manager: EntityManager, published: Parameters<typeof storeEvents>[1]) =>
      void (await storeEvents(manager, published)),
  } as unknown as EventsService;
  const notifier = (): Notifier =>
    new Notifier(new WebhooksRepository(ds), stored, { config: { publicUrl: null } } as never);
  evidence = new EvidenceService(
    new EvidenceRepository(ds),
    notifier(),
    new ShapeStore(new CapturesRepository(ds)),
    new VersionStore(ds),
  );
  // The proposals' lifecycle records the evidence steps folds reach, as in the app.
  new ProposalLifecycle(
    new ProposalsRepository(ds),
    evidence,
    notifier(),
    new AuditService(new AuditRepository(ds)),
    new VersionStore(ds),
  );
  [project] = (await ds.query(`SELECT id, slug FROM projects WHERE slug = 'steps'`)) as [EventProject];
});
afterAll(async () => {
  await ds?.destroy();
  await database?.drop();
});

/** An environment row of `kind` (build b1) with one batch queued: GET /items answered 200 without a body. */
async function queuedRow(kind: 'staging' | 'production'): Promise<string> {
  const [{ id }] = (await ds.query(
    `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
     VALUES ($1, $2, 'b1', '', 'b1', now(), now()) RETURNING id`,
    [project.id, kind],
  )) as [{ id: string }];
  const exchange = {
    method: 'GET',
    path: '/items',
    status: 200,
    req_ct: null,
    req_fp: null,
    res_ct: null,
    res_fp: null,
    count: 10,
    last_seen: new Date().toISOString(),
    query: null,
    req_h: null,
  };
  await ds.query(
    `INSERT INTO evidence_queue (project_id, row_id, build, commit, last_seen, packed_exchanges, packed_minutes, packed_consumers)
     VALUES ($1, $2, 'b1', NULL, now(), $3, '[]', '[]')`,
    [project.id, id, packList([exchange])],
  );
  return id;
}

/** Lock waits on the database now (another session's statement not granted its lock). */
async function lockWaits(): Promise<number> {
  const [{ n }] = (await ds.query(
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE NOT l.granted AND a.datname = current_database()`,
  )) as [{ n: number }];
  return n;
}

it("a fold does not wait for another row's fold of the same proposal while that one writes its runtime and consumers", async () => {
  const production = await queuedRow('production');
  const staging = await queuedRow('staging');

  // The production row's fold stops where it writes its runtime minutes and consumer days.
  let inAlsoFold!: () => void;
  const reachedAlsoFold = new Promise<void>((resolve) => (inAlsoFold = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const paused: QueuedFoldListener = async () => {
    inAlsoFold();
    await released;
  };
  const first = evidence.foldQueued(project, production, paused);
  let second: ReturnType<EvidenceService['foldQueued']> | undefined;
  try {
    await reachedAlsoFold;
    // The staging row's fold: done, or seen waiting for a lock, whichever comes first.
    let folded = false;
    second = evidence
      .foldQueued(project, staging, async () => undefined)
      .then((result) => {
        folded = true;
        return result;
      });
    const seen = await eventually(
      async () => (folded ? 'folded' : (await lockWaits()) > 0 ? 'waited for a lock' : 'neither yet'),
      (state) => state !== 'neither yet',
    );
    expect(seen).toBe('folded');
    expect(await second).toEqual({ folded: 1, left: false });
  } finally {
    release();
    await Promise.allSettled([first, second]);
  }
  expect(await first).toEqual({ folded: 1, left: false });

  // Both steps recorded, once each; the status the furthest of them.
  const steps = (await ds.query(
    `SELECT s.step, p.status FROM proposal_steps s JOIN proposals p ON p.id = s.proposal_id
      WHERE p.project_id = $1 ORDER BY s.at, s.step`,
    [project.id],
  )) as Array<{ step: string; status: string }>;
  expect(steps.map((s) => s.step).sort()).toEqual(['Appeared in Production', 'Appeared in Staging', 'Approved']);
  expect(new Set(steps.map((s) => s.status))).toEqual(new Set(['Appeared in Production']));
  // Nothing left waiting (the fold that waited, if any, has finished).
  expect(await lockWaits()).toBe(0);
});
