/**
 * Folds of two environment rows at once, in-process on one database (issue 20's lock tests,
 * fold-steps-lock and fold-current-lock): a project whose GET /items is documented and approved
 * (its proposal waits for the evidence steps), the evidence service and proposals' lifecycle as in
 * the app, a batch queued for a row, and a fold of one row paused in its heavy writes while a
 * fold of another runs.
 */
import type { TokenResponse } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { AuditRepository } from '../../src/audit/audit.repository';
import { AuditService } from '../../src/audit/audit.service';
import { CapturesRepository } from '../../src/captures/captures.repository';
import { ShapeStore } from '../../src/captures/shape-store';
import { createDataSource } from '../../src/database/data-source';
import { storeEvents } from '../../src/events/events.repository';
import type { EventsService } from '../../src/events/events.service';
import { EvidenceRepository } from '../../src/evidence/evidence.repository';
import { EvidenceService, type QueuedFoldListener } from '../../src/evidence/evidence.service';
import { packList } from '../../src/evidence/queued-payload';
import { ProposalLifecycle } from '../../src/proposals/proposal-lifecycle';
import { ProposalsRepository } from '../../src/proposals/proposals.repository';
import { VersionStore } from '../../src/versions/version-store';
import type { EventProject } from '../../src/webhooks/notifier';
import { Notifier } from '../../src/webhooks/notifier';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository';
import { eventually } from './evidence-helpers';
import { createTestDatabase, startTestBackend } from './index';

/** A fold's listener that folds and writes nothing besides the evidence. */
export const nothingElse: QueuedFoldListener = () => ({ add: () => undefined, write: () => Promise.resolve() });

export interface FoldLocks {
  ds: DataSource;
  evidence: EvidenceService;
  project: EventProject;
  /** A row of `kind` named `name` (first seen `firstSeen`, made when new) with one batch queued: 10 calls of each of `paths` (GET, 200, no body). */
  queuedRow(kind: 'staging' | 'production', name: string, firstSeen: string, paths: readonly string[]): Promise<string>;
  /** Lock waits on the database now (another session's statement not granted its lock). */
  lockWaits(): Promise<number>;
  /**
   * Folds row `first` paused where it writes its runtime minutes and consumer days, and meanwhile
   * row `second` (each must fold its one batch, and nothing be left waiting after them).
   * @returns whether the second fold finished or was seen waiting for a lock first.
   */
  foldBeside(first: string, second: string): Promise<'folded' | 'waited for a lock'>;
  close(): Promise<void>;
}

/** A project `slug` as above on a database of its own; with `webhook`, a webhook, so each announcement leaves a delivery. */
export async function startFoldLocks(slug: string, options: { webhook?: boolean } = {}): Promise<FoldLocks> {
  const database = await createTestDatabase({ migrated: true });
  // A backend migrates, documents GET /items (approved) and stops, so no folder of its own takes the batches queued here.
  const backend = await startTestBackend({ databaseUrl: database.url });
  try {
    expect((await backend.api('POST', '/projects', { slug, name: slug })).status).toBe(201);
    expect(
      (await backend.api<TokenResponse>('POST', `/projects/${slug}/tokens`, { name: 'a', scope: 'agent' })).status,
    ).toBe(201);
    const imported = await backend.api('POST', `/projects/${slug}/openapi/import?approve=true`, {
      openapi: '3.1.0',
      info: { title: slug, version: '1' },
      paths: { '/items': { get: { responses: { '200': { description: 'the items' } } } } },
    });
    expect(imported.status).toBe(201);
    if (options.webhook)
      expect((await backend.api('POST', `/projects/${slug}/webhooks`, { url: 'http://127.0.0.1:9/hook' })).status).toBe(
        201,
      );
  } finally {
    await backend.close();
  }
  const ds = createDataSource(database.url, { poolSize: 4 });
  await ds.initialize();
  const stored = {
    publishWithin: async (manager: EntityManager, published: Parameters<typeof storeEvents>[1]) =>
      void (await storeEvents(manager, published)),
  } as unknown as EventsService;
  const notifier = (): Notifier =>
    new Notifier(new WebhooksRepository(ds), stored, { config: { publicUrl: null } } as never);
  const evidence = new EvidenceService(
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
  const [project] = (await ds.query(`SELECT id, slug FROM projects WHERE slug = $1`, [slug])) as [EventProject];

  const lockWaits = async (): Promise<number> => {
    const [{ n }] = (await ds.query(
      `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE NOT l.granted AND a.datname = current_database()`,
    )) as [{ n: number }];
    return n;
  };

  return {
    ds,
    evidence,
    project,
    lockWaits,
    async queuedRow(kind, name, firstSeen, paths) {
      const [{ id }] = (await ds.query(
        `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
         VALUES ($1, $2, $3, '', $3, $4, $4)
         ON CONFLICT (project_id, kind, name) DO UPDATE SET last_seen = EXCLUDED.last_seen RETURNING id`,
        [project.id, kind, name, firstSeen],
      )) as [{ id: string }];
      const exchanges = paths.map((path) => ({
        method: 'GET',
        path,
        status: 200,
        req_ct: null,
        req_fp: null,
        res_ct: null,
        res_fp: null,
        count: 10,
        last_seen: new Date().toISOString(),
        query: null,
        req_h: null,
      }));
      await ds.query(
        `INSERT INTO evidence_queue (project_id, row_id, build, commit, last_seen, packed_exchanges, packed_minutes, packed_consumers)
         VALUES ($1, $2, $3, NULL, now(), $4, '[]', '[]')`,
        [project.id, id, name, packList(exchanges)],
      );
      return id;
    },
    async foldBeside(first, second) {
      let inAlsoFold!: () => void;
      const reachedAlsoFold = new Promise<void>((resolve) => (inAlsoFold = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const paused: QueuedFoldListener = () => ({
        add: () => undefined,
        write: async () => {
          inAlsoFold();
          await released;
        },
      });
      const firstFold = evidence.foldQueued(project, first, paused);
      let secondFold: ReturnType<EvidenceService['foldQueued']> | undefined;
      try {
        await reachedAlsoFold;
        // The second fold: done, or seen waiting for a lock, whichever comes first.
        let folded = false;
        secondFold = evidence.foldQueued(project, second, nothingElse).then((result) => {
          folded = true;
          return result;
        });
        return (await eventually(
          async () => (folded ? 'folded' : (await lockWaits()) > 0 ? 'waited for a lock' : 'neither yet'),
          (state) => state !== 'neither yet',
        )) as 'folded' | 'waited for a lock';
      } finally {
        release();
        expect(await firstFold).toEqual({ folded: 1, left: false });
        if (secondFold !== undefined) expect(await secondFold).toEqual({ folded: 1, left: false });
        // Nothing left waiting (the fold that waited, if any, has finished).
        expect(await lockWaits()).toBe(0);
      }
    },
    async close() {
      await ds.destroy();
      await database.drop();
    },
  };
}
