import type {
  CaptureResponse,
  DiffResponse,
  DocumentationResponse,
  ProjectResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { CapturesRepository } from '../src/captures/captures.repository';
import { CapturesService } from '../src/captures/captures.service';
import { ShapeStore } from '../src/captures/shape-store';
import { createDataSource } from '../src/database/data-source';
import { VersionStore } from '../src/versions/version-store';
import { CaptureViews } from '../src/views/capture-views';
import { aggregateObservations } from '../src/ingest/ingest.service';
import { WRITE_BATCH, writeBatchParameters } from '../src/captures/batch-statement';
import type { ProjectEntity } from '../src/projects/project.entity';
import {
  batchMessage,
  connectTestAgent,
  helloMessage,
  type TestAgent,
  type TestExchange,
} from './support/agent-client';
import { startTestBackend, startTestReplica, type TestBackend } from './support';
import { endpointCountsDiffering, eventually } from './support/evidence-helpers';

// The views a replica keeps are patched from the endpoints each new batch touched. These tests
// hold the patched views against a full computation (a CapturesService with nothing kept) after
// random sequences of batches from agents on two replicas, some of them concurrent with each
// other and with reads, documentation commits and rule changes; and after batches committed out
// of the order their transactions started in.

let reader: TestBackend;
let writer: TestBackend;
let ds: DataSource;
let db: pg.Client;
/** A CapturesService kept across the steps (its views patched), with the SQL texts it ran. */
let kept: CapturesService;
const keptQueries: string[] = [];
let agentToken: string;
let project: ProjectEntity;

/** A CapturesService over the test database; its `db.query` calls are recorded in `log` when given. */
function capturesService(log?: string[]): CapturesService {
  const recording =
    log === undefined
      ? ds
      : ({
          query: (sql: string, parameters?: unknown[]) => (log.push(sql), ds.query(sql, parameters)),
        } as unknown as DataSource);
  return new CapturesService(
    new CapturesRepository(recording),
    new ShapeStore(new CapturesRepository(ds)),
    new VersionStore(ds),
    new CaptureViews(recording),
  );
}

/** A patch reads summaries by key (`summariesOf`); a full computation reads them all. */
const patchesIn = (queries: readonly string[]): number =>
  queries.filter((sql) => sql.includes('AS k(method, path)')).length;

beforeAll(async () => {
  reader = await startTestBackend();
  writer = await startTestReplica(reader);
  ds = createDataSource(reader.databaseUrl, { poolSize: 4 });
  await ds.initialize();
  db = new pg.Client({ connectionString: reader.databaseUrl });
  await db.connect();
  kept = capturesService(keptQueries);
  const created = await writer.api<ProjectResponse>('POST', '/projects', { slug: 'incremental', name: 'Incremental' });
  expect(created.status).toBe(201);
  project = { id: created.body.id, slug: 'incremental', name: 'Incremental' } as ProjectEntity;
  agentToken = (
    await writer.api<TokenResponse>('POST', '/projects/incremental/tokens', { name: 'agents', scope: 'agent' })
  ).body.token as string;
});
afterAll(async () => {
  await db.end();
  await ds.destroy();
  await writer.close();
  await reader.close();
});

/** A deterministic pseudo-random source (mulberry32), so a failing sequence can be replayed by its seed. */
function randomSource(seed: number): {
  int(below: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
} {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (below: number): number => Math.floor(next() * below);
  return { int, pick: (items) => items[int(items.length)] as (typeof items)[number], chance: (p) => next() < p };
}

const METHODS = ['GET', 'POST'];
const PATHS = ['/posts', '/posts/{id}', '/users', '/users/{id}/posts', '/health', '/admin/stats'];
const BODIES: unknown[] = [undefined, { title: 't' }, { title: 't', tags: ['x'] }, { title: 1 }];
const RULE_SETS: string[][] = [[], ['GET /health'], ['/admin/*', 'POST /users'], ['GET /posts/{id}']];

/** A batch of 1-6 random exchanges. */
function randomExchanges(random: ReturnType<typeof randomSource>): TestExchange[] {
  return Array.from({ length: 1 + random.int(6) }, () => ({
    method: random.pick(METHODS),
    path: random.pick(PATHS),
    status: random.pick([200, 201, 400]),
    request: random.pick(BODIES),
    response: random.pick(BODIES.slice(1)),
    count: 1 + random.int(3),
  }));
}

/** The three views of a capture as the API sends them (summary: its counts only). */
interface Views {
  undocumented: UndocumentedEndpointResponse[];
  diffs: DiffResponse[];
  summary: Pick<CaptureResponse, 'interactions' | 'undocumented' | 'diffs'>;
}

async function viewsOf(service: CapturesService, captureId: string): Promise<Views> {
  const capture = await service.byId(project, captureId);
  const [undocumented, diffs, summary] = await Promise.all([
    service.undocumentedJson(project, captureId),
    service.diffsJson(project, captureId),
    service.summary(project, capture),
  ]);
  return {
    undocumented: JSON.parse(undocumented) as UndocumentedEndpointResponse[],
    diffs: JSON.parse(diffs) as DiffResponse[],
    summary: { interactions: summary.interactions, undocumented: summary.undocumented, diffs: summary.diffs },
  };
}

async function viewsFromReader(captureId: string): Promise<Views> {
  const route = `/projects/incremental/captures/${captureId}`;
  const [undocumented, diffs, summary] = await Promise.all([
    reader.api<UndocumentedEndpointResponse[]>('GET', `${route}/undocumented`),
    reader.api<DiffResponse[]>('GET', `${route}/diffs`),
    reader.api<CaptureResponse>('GET', route),
  ]);
  const { interactions, undocumented: undocumentedCount, diffs: diffCount } = summary.body;
  return {
    undocumented: undocumented.body,
    diffs: diffs.body,
    summary: { interactions, undocumented: undocumentedCount, diffs: diffCount },
  };
}

/** The kept views (the reader replica's and this process's) equal a computation from scratch. */
async function expectKeptViewsExact(captureId: string, step: string): Promise<Views> {
  const viaReader = await viewsFromReader(captureId);
  const viaKept = await viewsOf(kept, captureId);
  const full = await viewsOf(capturesService(), captureId);
  expect({ step, views: viaReader }).toEqual({ step, views: full });
  expect({ step, views: viaKept }).toEqual({ step, views: full });
  return full;
}

/** An agent on `backend` with its own capture (it may send batches for any capture of the project). */
async function openAgent(backend: TestBackend): Promise<{ agent: TestAgent; captureId: string }> {
  const agent = await connectTestAgent(backend.url, agentToken);
  const hello = helloMessage();
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  return { agent, captureId: hello.capture.id };
}

async function send(agent: TestAgent, captureId: string, exchanges: TestExchange[]): Promise<void> {
  const batch = batchMessage(captureId, exchanges);
  expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
}

describe('capture views patched from the endpoints of new batches', () => {
  it.each([1, 2, 3])(
    'equal a full computation after a random sequence of batches, commits and rule changes (seed %i)',
    async (seed) => {
      const random = randomSource(seed);
      const { agent: owner, captureId } = await openAgent(reader);
      const { agent: other } = await openAgent(writer);
      const { agent: third } = await openAgent(writer);
      const patchesBefore = patchesIn(keptQueries);
      try {
        let views = await expectKeptViewsExact(captureId, 'empty');
        for (let step = 0; step < 14; step++) {
          const action = random.pick([
            'batch',
            'batch',
            'concurrent',
            'concurrent',
            'read during batches',
            'commit',
            'rules',
          ] as const);
          const label = `seed ${seed} step ${step} ${action}`;
          if (action === 'batch') await send(random.chance(0.5) ? owner : other, captureId, randomExchanges(random));
          else if (action === 'concurrent') {
            await Promise.all([owner, other, third].map((agent) => send(agent, captureId, randomExchanges(random))));
          } else if (action === 'read during batches') {
            // Reads on both replicas while batches commit: what they keep must catch up on the next read.
            await Promise.all([
              send(owner, captureId, randomExchanges(random)),
              send(other, captureId, randomExchanges(random)),
              viewsFromReader(captureId),
              viewsOf(kept, captureId),
            ]);
          } else if (action === 'commit' && views.undocumented.length + views.diffs.length > 0) {
            const candidates = [...views.undocumented, ...views.diffs].map(({ method, path }) => ({ method, path }));
            const chosen = random.pick(candidates);
            const committed = await writer.api<DocumentationResponse>('POST', '/projects/incremental/documentation', {
              captureId,
              endpoints: [{ ...chosen, documentBodies: true }],
            });
            expect(committed.status).toBe(201);
          } else if (action === 'rules') {
            const rules = random.pick(RULE_SETS);
            owner.send({ type: 'rules', captureId, rules });
            await eventually(
              async () =>
                (await db.query<{ rules: string[] }>('SELECT rules FROM captures WHERE id = $1', [captureId])).rows[0]
                  ?.rules,
              (stored) => JSON.stringify(stored) === JSON.stringify(rules),
            );
          }
          views = await expectKeptViewsExact(captureId, label);
        }
        // The sequence exercised the patches, not only full computations.
        expect(patchesIn(keptQueries) - patchesBefore).toBeGreaterThan(0);
      } finally {
        await Promise.all([owner.close(), other.close(), third.close()]);
      }
    },
  );

  it('see a batch whose transaction took its id first and committed last', async () => {
    const { agent, captureId } = await openAgent(writer);
    try {
      await send(agent, captureId, [{ method: 'GET', path: '/early', status: 200, response: { ok: true } }]);
      await expectKeptViewsExact(captureId, 'before');
      // A batch written in a transaction left open (it has the lower transaction id) ...
      const slow = new pg.Client({ connectionString: reader.databaseUrl });
      await slow.connect();
      try {
        const message = batchMessage(captureId, [
          { method: 'GET', path: '/slow', status: 200, response: { ok: true } },
          { method: 'GET', path: '/early', status: 200, response: { ok: true }, count: 5 },
        ]);
        const rows = aggregateObservations(message.observations);
        const shapes = Object.entries(message.shapes).sort(([a], [b]) => (a < b ? -1 : 1));
        await slow.query('BEGIN');
        await slow.query(
          WRITE_BATCH,
          writeBatchParameters(
            { batchId: message.batchId, projectId: project.id, captureId, observations: rows.length, shapes },
            rows,
          ),
        );
        // ... while a later one commits and the views are read (their snapshot sees the open one as running) ...
        await send(agent, captureId, [{ method: 'GET', path: '/fast', status: 200, response: { ok: true } }]);
        const during = await expectKeptViewsExact(captureId, 'while the slow batch is open');
        expect(during.undocumented.map((u) => u.path)).toEqual(['/early', '/fast']);
        await slow.query('COMMIT');
      } finally {
        await slow.end();
      }
      // ... and then commits: the next read has it, though a batch with a higher id was already read.
      const after = await expectKeptViewsExact(captureId, 'after the slow batch committed');
      expect(after.undocumented.map((u) => [u.path, u.interactions])).toEqual([
        ['/early', 6],
        ['/fast', 1],
        ['/slow', 1],
      ]);
      // Both batches brought a new endpoint to the capture's count, neither waiting for the other.
      expect(await endpointCountsDiffering(reader.databaseUrl)).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it('are computed in full when more endpoints changed than a patch is worth', async () => {
    const { agent, captureId } = await openAgent(writer);
    try {
      await send(agent, captureId, [{ method: 'GET', path: '/first', status: 200, response: { ok: true } }]);
      await expectKeptViewsExact(captureId, 'before');
      // 2,100 endpoints in two batches (over the 2,000 a patch reads), then one more small batch.
      for (const part of [0, 1]) {
        await send(
          agent,
          captureId,
          Array.from({ length: 1050 }, (_, i) => ({
            method: 'GET',
            path: `/many/${part}/${i}`,
            status: 200,
            response: { ok: true },
          })),
        );
      }
      const patchesBefore = patchesIn(keptQueries);
      const after = await expectKeptViewsExact(captureId, 'after 2,100 endpoints');
      expect(after.undocumented).toHaveLength(2101);
      expect(patchesIn(keptQueries)).toBe(patchesBefore);
      await send(agent, captureId, [{ method: 'GET', path: '/first', status: 200, response: { ok: true } }]);
      await expectKeptViewsExact(captureId, 'after one more batch');
      expect(patchesIn(keptQueries)).toBeGreaterThan(patchesBefore);
    } finally {
      await agent.close();
    }
  });

  it('are computed in full after a batch that did not record the endpoints it touched', async () => {
    const { agent, captureId } = await openAgent(writer);
    try {
      await send(agent, captureId, [{ method: 'GET', path: '/known', status: 200, response: { ok: true } }]);
      await expectKeptViewsExact(captureId, 'before');
      // A writer that lists no touched endpoints (as before this change): its batch row has NULL keys.
      const message = batchMessage(captureId, [
        { method: 'GET', path: '/unlisted', status: 200, response: { ok: true } },
      ]);
      const rows = aggregateObservations(message.observations);
      const parameters = writeBatchParameters(
        {
          batchId: message.batchId,
          projectId: project.id,
          captureId,
          observations: rows.length,
          shapes: Object.entries(message.shapes),
        },
        rows,
      );
      await db.query(WRITE_BATCH, [...parameters.slice(0, 24), null, null, ...parameters.slice(26)]);
      const after = await expectKeptViewsExact(captureId, 'after the unlisted batch');
      expect(after.undocumented.map((u) => u.path)).toEqual(['/known', '/unlisted']);
    } finally {
      await agent.close();
    }
  });
});
