/**
 * The batch statement queues a batch's evidence itself (issue 20: one statement per evidence
 * batch, no transaction of its own). What it queues must be what the batch stored: rows of
 * endpoints past the capture's cap are counted as overflow and become no evidence (exchanges,
 * runtime minutes, consumer days), in the same commit. Each case runs the statement in a
 * transaction of its own and reads the queue before rolling back, so no fold takes the row first.
 */
import type { TokenResponse } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import {
  type AggregatedRow,
  type BatchHeader,
  type BatchPart,
  type QueuedEvidence,
  batchPart,
} from '../src/captures/batch-statement';
import { CapturesRepository } from '../src/captures/captures.repository';
import { createDataSource } from '../src/database/data-source';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { BatchWriter } from '../src/ingest/batch-writer';
import { packList, unpackList } from '../src/evidence/queued-payload';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';
import { aggregatedRow } from './support/batch-rows';

let backend: TestBackend;
let ds: DataSource;
let captures: CapturesRepository;
let projectId: string;
let rowId: string;

beforeAll(async () => {
  backend = await startTestBackend();
  ds = createDataSource(backend.databaseUrl, { poolSize: 1 });
  await ds.initialize();
  captures = new CapturesRepository(ds);
  projectId = (await backend.api<{ id: string }>('POST', '/projects', { slug: 'queue', name: 'Queue' })).body.id;
  // A staging agent's first batch makes the environment row the cases queue for.
  const token = (await backend.api<TokenResponse>('POST', '/projects/queue/tokens', { name: 'a', scope: 'agent' })).body
    .token as string;
  const agent = await connectTestAgent(backend.url, token);
  try {
    const hello = helloMessage({ environment: { kind: 'staging', build: 'b1' } });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    const batch = batchMessage(hello.capture.id, [{ method: 'GET', path: '/seed', status: 200 }]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
  } finally {
    await agent.close();
  }
  const [row] = (await ds.query('SELECT id FROM environment_rows WHERE project_id = $1', [projectId])) as Array<{
    id: string;
  }>;
  rowId = row!.id;
});
afterAll(async () => {
  await ds.destroy();
  await backend.close();
});

/** A new capture of the project (no endpoints yet); its id. */
async function newCapture(manager: EntityManager): Promise<string> {
  const id = crypto.randomUUID();
  await manager.query(
    `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at)
     VALUES ($1, $2, 'staging', 'staging', 'agent-start', now())`,
    [id, projectId],
  );
  return id;
}

function row(path: string, count: number, lastSeen: string): AggregatedRow {
  return aggregatedRow(path, { count, first_seen: '2026-11-29T00:00:00.000Z', last_seen: lastSeen });
}

/** Evidence naming each of `rows` once in exchanges and consumers, and `minutePaths` in minutes. */
function evidenceOf(rows: readonly AggregatedRow[], minutePaths: readonly string[]): QueuedEvidence {
  return {
    rowId,
    build: 'b1',
    commit: null,
    exchanges: packList(rows.map((r) => ({ method: r.method, path: r.path, count: r.count, last_seen: r.last_seen }))),
    minutes: packList(minutePaths.map((path) => ({ method: 'GET', path, minute: '2026-11-29T00:00:00.000Z' }))),
    consumers: packList(rows.map((r) => ({ method: r.method, path: r.path, consumer: '*', calls: r.count }))),
  };
}

/** The lists a queued evidence holds, unpacked. */
const listsOf = (evidence: QueuedEvidence): Pick<Queued, 'exchanges' | 'minutes' | 'consumers'> => ({
  exchanges: unpackList(evidence.exchanges),
  minutes: unpackList(evidence.minutes),
  consumers: unpackList(evidence.consumers),
});

interface Queued {
  last_seen: Date;
  build: string;
  exchanges: Array<{ path: string }>;
  minutes: Array<{ path: string }>;
  consumers: Array<{ path: string }>;
}

/**
 * Runs the batch statement in a transaction (`again`: a second time, its first queued batch
 * deleted; `then`: then that, in the transaction), reads what it queued and the capture's
 * counters, and rolls back (so no fold takes it).
 */
async function written(
  header: Omit<BatchHeader, 'projectId' | 'captureId' | 'observations' | 'shapes'>,
  rows: readonly AggregatedRow[],
  again = false,
  then?: (manager: EntityManager) => Promise<void>,
): Promise<{ claimed: boolean; queued: Queued | null; overflow: number; unmatched: [number, number] }> {
  const runner = ds.createQueryRunner();
  await runner.startTransaction();
  try {
    const captureId = await newCapture(runner.manager);
    const parameters = batchPart({ projectId, captureId, observations: rows.length, shapes: [], ...header }, rows);
    let result = await captures.writeBatch(parameters, runner.manager);
    if (again) {
      expect(result.queuedId).not.toBeNull();
      await runner.query('DELETE FROM evidence_queue WHERE id = $1', [result.queuedId]);
      result = await captures.writeBatch(parameters, runner.manager);
    }
    await then?.(runner.manager);
    // Named: parsed once per connection, not for every batch (common/prepared.ts).
    expect(
      await runner.query("SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'spectator_write_batch'"),
    ).toEqual([{ n: 1 }]);
    const [stored] = (await runner.query(
      `SELECT last_seen, build, packed_exchanges AS exchanges, packed_minutes AS minutes, packed_consumers AS consumers
         FROM evidence_queue WHERE project_id = $1 AND id = $2`,
      [projectId, result.queuedId ?? '0'],
    )) as Array<
      Omit<Queued, 'exchanges' | 'minutes' | 'consumers'> & Record<'exchanges' | 'minutes' | 'consumers', string>
    >;
    const queued: Queued | undefined = stored && {
      ...stored,
      exchanges: unpackList(stored.exchanges),
      minutes: unpackList(stored.minutes),
      consumers: unpackList(stored.consumers),
    };
    const [capture] = (await runner.query(
      'SELECT overflow_requests::int AS o, unmatched_requests::int AS r, unmatched_paths::int AS p FROM captures WHERE id = $1',
      [captureId],
    )) as Array<{ o: number; r: number; p: number }>;
    if (result.queuedId === null) expect(queued).toBeUndefined();
    return {
      claimed: result.claimed,
      queued: queued ?? null,
      overflow: capture!.o,
      unmatched: [capture!.r, capture!.p],
    };
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
}

const paths = (items: ReadonlyArray<{ path: string }>): string[] => items.map((item) => item.path);

describe('the batch statement queues a batch’s evidence', () => {
  it('as sent when the capture kept every row, its last seen the newest row’s', async () => {
    const rows = [row('/a', 1, '2026-11-29T00:00:05.000Z'), row('/b', 2, '2026-11-29T00:00:09.000Z')];
    const evidence = evidenceOf(rows, ['/a', '/b']);
    const { claimed, queued, overflow } = await written({ batchId: crypto.randomUUID(), evidence }, rows);
    expect(claimed).toBe(true);
    expect(overflow).toBe(0);
    expect(queued).toMatchObject({ build: 'b1', last_seen: new Date('2026-11-29T00:00:09.000Z') });
    expect(queued).toMatchObject(listsOf(evidence));
  });

  it('without the exchanges, minutes and consumer days of endpoints past the cap', async () => {
    // Cap 2, a new capture: /a and /b are kept (byte order), /c is overflow; /f is a failure's
    // minute only (no row), which the cap does not touch. /c is the newest: not the queue's last seen.
    const rows = [
      row('/a', 1, '2026-11-29T00:00:05.000Z'),
      row('/b', 2, '2026-11-29T00:00:06.000Z'),
      row('/c', 4, '2026-11-29T00:00:09.000Z'),
    ];
    const evidence = evidenceOf(rows, ['/a', '/c', '/f', '/b']);
    const { queued, overflow } = await written({ batchId: crypto.randomUUID(), maxEndpoints: 2, evidence }, rows);
    expect(overflow).toBe(4);
    expect(queued!.last_seen).toEqual(new Date('2026-11-29T00:00:06.000Z'));
    expect(paths(queued!.exchanges)).toEqual(['/a', '/b']);
    expect(paths(queued!.minutes)).toEqual(['/a', '/f', '/b']);
    expect(paths(queued!.consumers)).toEqual(['/a', '/b']);
    // The kept elements are whole.
    expect(queued!.exchanges[1]).toEqual({
      method: 'GET',
      path: '/b',
      count: 2,
      last_seen: '2026-11-29T00:00:06.000Z',
    });
  });

  it('only with minutes left when the cap dropped every row, and nothing when nothing is left', async () => {
    const rows = [row('/a', 1, '2026-11-29T00:00:05.000Z')];
    const failures = await written(
      { batchId: crypto.randomUUID(), maxEndpoints: 0, evidence: evidenceOf(rows, ['/a', '/f']) },
      rows,
    );
    expect(failures.overflow).toBe(1);
    expect(failures.queued).toMatchObject({ exchanges: [], consumers: [] });
    expect(paths(failures.queued!.minutes)).toEqual(['/f']);
    const none = await written(
      { batchId: crypto.randomUUID(), maxEndpoints: 0, evidence: evidenceOf(rows, ['/a']) },
      rows,
    );
    expect(none).toMatchObject({ claimed: true, queued: null, overflow: 1 });
  });

  it('once: a batch id already written queues nothing and counts no noise again', async () => {
    const rows = [row('/a', 1, '2026-11-29T00:00:05.000Z')];
    const { claimed, queued, unmatched } = await written(
      {
        batchId: crypto.randomUUID(),
        evidence: evidenceOf(rows, ['/a']),
        unmatched: { requests: 3, paths: 2 },
      },
      rows,
      true,
    );
    expect(claimed).toBe(false);
    expect(queued).toBeNull();
    expect(unmatched).toEqual([3, 2]);
  });

  it('not at all for a batch that is no evidence; its noise counts still added', async () => {
    const rows = [row('/a', 1, '2026-11-29T00:00:05.000Z')];
    const { claimed, queued, unmatched } = await written(
      { batchId: crypto.randomUUID(), unmatched: { requests: 5, paths: 1 } },
      rows,
    );
    expect(claimed).toBe(true);
    expect(queued).toBeNull();
    expect(unmatched).toEqual([5, 1]);
  });
});

describe('regrouping', () => {
  it('renames the paths of queued exchanges, minutes and consumer days, and nothing else', async () => {
    const rows = [
      row('/users/alice', 1, '2026-11-29T00:00:05.000Z'),
      row('/users/bob', 2, '2026-11-29T00:00:06.000Z'),
      row('/other', 3, '2026-11-29T00:00:07.000Z'),
    ];
    const evidence = evidenceOf(rows, ['/users/alice', '/other', '/users/bob']);
    const { queued } = await written({ batchId: crypto.randomUUID(), evidence }, rows, false, (manager) =>
      new EvidenceRepository(ds).renameQueuedPaths(
        manager,
        projectId,
        [rowId],
        ['/users/alice', '/users/bob'],
        '/users/{user}',
      ),
    );
    expect(paths(queued!.exchanges)).toEqual(['/users/{user}', '/users/{user}', '/other']);
    expect(paths(queued!.minutes)).toEqual(['/users/{user}', '/other', '/users/{user}']);
    expect(paths(queued!.consumers)).toEqual(['/users/{user}', '/users/{user}', '/other']);
    expect(queued!.exchanges[1]).toEqual({
      method: 'GET',
      path: '/users/{user}',
      count: 2,
      last_seen: '2026-11-29T00:00:06.000Z',
    });
  });
});

describe('several batches in one statement', () => {
  /** The queue row `id`'s exchanges' paths (read in `manager`'s transaction). */
  async function queuedPaths(manager: EntityManager, id: string | null): Promise<string[]> {
    const [stored] = (await manager.query(
      'SELECT packed_exchanges AS exchanges FROM evidence_queue WHERE project_id = $1 AND id = $2',
      [projectId, id ?? '0'],
    )) as Array<{ exchanges: string }>;
    return stored === undefined ? [] : paths(unpackList(stored.exchanges) as Array<{ path: string }>);
  }

  /** Observation rows of a capture: (path, count). */
  async function stored(manager: EntityManager, captureId: string): Promise<Array<{ path: string; count: number }>> {
    return (await manager.query(
      'SELECT path, count::int AS count FROM observations WHERE capture_id = $1 ORDER BY path',
      [captureId],
    )) as Array<{ path: string; count: number }>;
  }

  it('writes each as alone: a duplicate, a deleted capture and a capped capture change no neighbour', async () => {
    const runner = ds.createQueryRunner();
    await runner.startTransaction();
    try {
      const [plain, bare, resent, capped] = [
        await newCapture(runner.manager),
        await newCapture(runner.manager),
        await newCapture(runner.manager),
        await newCapture(runner.manager),
      ];
      const gone = crypto.randomUUID();
      const rows = [row('/a', 1, '2026-11-29T00:00:05.000Z'), row('/b', 2, '2026-11-29T00:00:06.000Z')];
      const header = (captureId: string, batchId = crypto.randomUUID()): BatchHeader => ({
        batchId,
        projectId,
        captureId,
        observations: 2,
        shapes: [],
        evidence: evidenceOf(rows, []),
      });
      const resentId = crypto.randomUUID();
      expect(await captures.writeBatch(batchPart(header(resent, resentId), rows), runner.manager)).toMatchObject({
        claimed: true,
      });
      const answers = await captures.writeBatches(
        [
          batchPart(header(plain), rows),
          // No evidence (its packed lists none, between the others'): its rows only.
          batchPart({ batchId: crypto.randomUUID(), projectId, captureId: bare, observations: 2, shapes: [] }, rows),
          batchPart(header(resent, resentId), rows),
          batchPart(header(gone), rows),
          batchPart({ ...header(capped), maxEndpoints: 1 }, rows),
        ],
        runner.manager,
      );
      expect(answers.map(({ claimed, captured }) => ({ claimed, captured }))).toEqual([
        { claimed: true, captured: true },
        { claimed: true, captured: true },
        { claimed: false, captured: true },
        { claimed: false, captured: false },
        { claimed: true, captured: true },
      ]);
      expect(answers[1]!.queuedId).toBeNull();
      expect(answers[2]!.queuedId).toBeNull();
      expect(answers[3]!.queuedId).toBeNull();
      // One and four batches are one prepared statement (one text whatever the count), planned on its connection.
      expect(
        await runner.query(
          "SELECT name FROM pg_prepared_statements WHERE name LIKE 'spectator\\_write\\_%' ORDER BY name",
        ),
      ).toEqual([{ name: 'spectator_write_batch' }]);
      // Each batch's own queue row, its own kept keys.
      expect(await queuedPaths(runner.manager, answers[0]!.queuedId)).toEqual(['/a', '/b']);
      expect(await queuedPaths(runner.manager, answers[4]!.queuedId)).toEqual(['/a']);
      for (const captureId of [plain, bare])
        expect(await stored(runner.manager, captureId)).toEqual([
          { path: '/a', count: 1 },
          { path: '/b', count: 2 },
        ]);
      // The resent batch counted once; the capped capture kept /a and counted /b's 2 as overflow.
      expect(await stored(runner.manager, resent)).toEqual([
        { path: '/a', count: 1 },
        { path: '/b', count: 2 },
      ]);
      expect(await stored(runner.manager, capped)).toEqual([{ path: '/a', count: 1 }]);
      expect(
        await runner.query('SELECT id::text, overflow_requests::int AS o FROM captures WHERE id = ANY($1) ORDER BY o', [
          [plain, capped],
        ]),
      ).toEqual([
        { id: plain, o: 0 },
        { id: capped, o: 2 },
      ]);
      // Each capture's summaries and endpoint count, as alone.
      expect(
        await runner.query(
          `SELECT capture_id::text AS capture, sum(endpoints)::int AS n FROM capture_endpoint_counts
            WHERE capture_id = ANY($1) GROUP BY 1 ORDER BY 2`,
          [[plain, capped]],
        ),
      ).toEqual([
        { capture: capped, n: 1 },
        { capture: plain, n: 2 },
      ]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('a replica writes batches that wait together, and a failing one alone (BatchWriter)', async () => {
    const statements: number[] = [];
    const writer = new BatchWriter(
      (parts) => {
        statements.push(parts.length);
        return captures.writeBatches(parts);
      },
      1,
      8,
    );
    const [first, second, third] = [
      await newCapture(ds.manager),
      await newCapture(ds.manager),
      await newCapture(ds.manager),
    ];
    const part = (captureId: string, status = 200): BatchPart =>
      batchPart({ batchId: crypto.randomUUID(), projectId, captureId, observations: 1, shapes: [] }, [
        aggregatedRow('/w', { status }),
      ]);
    // The first runs alone; the next three wait for it, then go together, and fail there on the
    // second's status (past smallint): each is written again alone.
    const written = [
      writer.submit(part(first)),
      writer.submit(part(second, 70_000)),
      writer.submit(part(third)),
      writer.submit(part(first)),
    ].map((promise) =>
      promise.then(
        (answer) => answer.claimed,
        (error: Error) => error.message,
      ),
    );
    const outcomes = await Promise.all(written);
    expect(outcomes[0]).toBe(true);
    expect(outcomes[1]).toMatch(/out of range/);
    expect(outcomes.slice(2)).toEqual([true, true]);
    expect(statements).toEqual([1, 3, 1, 1, 1]);
    expect(await stored(ds.manager, first)).toEqual([{ path: '/w', count: 2 }]);
    expect(await stored(ds.manager, second)).toEqual([]);
    expect(await stored(ds.manager, third)).toEqual([{ path: '/w', count: 1 }]);
  });
});
