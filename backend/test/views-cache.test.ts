import type {
  CaptureResponse,
  DiffResponse,
  DocumentationResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import pg from 'pg';
import {
  batchMessage,
  connectTestAgent,
  helloMessage,
  type TestAgent,
  type TestExchange,
} from './support/agent-client';
import { startTestBackend, startTestReplica, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';

// The views are read from one replica (which keeps them in memory between requests) while every
// change arrives through the other, so a stale entry could only be noticed through the database.
let reader: TestBackend;
let writer: TestBackend;

beforeAll(async () => {
  reader = await startTestBackend();
  writer = await startTestReplica(reader);
});
afterAll(async () => {
  await writer.close();
  await reader.close();
});

const created: TestExchange = {
  method: 'POST',
  path: '/posts',
  status: 201,
  request: { title: 't' },
  response: { id: 1 },
};
const health: TestExchange = { method: 'GET', path: '/health', status: 200, response: { ok: true } };

describe('capture views served from memory', () => {
  let agent: TestAgent;
  let captureId: string;
  const route = (view: string): string => `/projects/cache/captures/${captureId}${view}`;
  const undocumented = async (): Promise<Array<[string, number]>> =>
    (await reader.api<UndocumentedEndpointResponse[]>('GET', route('/undocumented'))).body.map((u) => [
      `${u.method} ${u.path}`,
      u.interactions,
    ]);
  const diffs = async (): Promise<Array<[string, string, string[]]>> =>
    (await reader.api<DiffResponse[]>('GET', route('/diffs'))).body.map((d) => [
      `${d.method} ${d.path}`,
      d.version,
      d.changes.map((c) => `${c.change} ${c.at}`),
    ]);
  const summary = async (): Promise<Pick<CaptureResponse, 'interactions' | 'undocumented' | 'diffs'>> => {
    const {
      interactions,
      undocumented: count,
      diffs: diffCount,
    } = (await reader.api<CaptureResponse>('GET', route(''))).body;
    return { interactions, undocumented: count, diffs: diffCount };
  };
  const send = async (exchanges: TestExchange[]): Promise<void> => {
    const batch = batchMessage(captureId, exchanges);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
  };
  /** Sends rules in effect and waits until the database has them (read through the writer, no batch in between). */
  const setRules = async (rules: string[]): Promise<void> => {
    agent.send({ type: 'rules', captureId, rules });
    await eventually(
      async () => (await writer.api<CaptureResponse>('GET', route(''))).body.rules,
      (stored) => JSON.stringify(stored) === JSON.stringify(rules),
    );
  };
  const commit = async (method: string, path: string): Promise<void> => {
    expect(
      (
        await writer.api<DocumentationResponse>('POST', '/projects/cache/documentation', {
          captureId,
          endpoints: [{ method, path, documentBodies: true }],
        })
      ).status,
    ).toBe(201);
  };

  beforeAll(async () => {
    expect((await writer.api('POST', '/projects', { slug: 'cache', name: 'Cache' })).status).toBe(201);
    const token = (await writer.api<TokenResponse>('POST', '/projects/cache/tokens', { name: 'agent', scope: 'agent' }))
      .body.token as string;
    agent = await connectTestAgent(writer.url, token);
    const hello = helloMessage();
    await agent.request(hello);
    captureId = hello.capture.id;
  });
  afterAll(() => agent.close());

  it('show a new batch, a documentation commit and a rule change on the next request', async () => {
    await send([created, health]);
    expect(await undocumented()).toEqual([
      ['GET /health', 1],
      ['POST /posts', 1],
    ]);
    expect(await summary()).toEqual({ interactions: 2, undocumented: 2, diffs: 0 });
    // Read again unchanged (served from memory), then a new batch through the other replica.
    expect(await undocumented()).toEqual([
      ['GET /health', 1],
      ['POST /posts', 1],
    ]);
    await send([
      { ...created, count: 2 },
      { method: 'GET', path: '/posts', status: 200, response: [] },
    ]);
    expect(await undocumented()).toEqual([
      ['GET /health', 1],
      ['GET /posts', 1],
      ['POST /posts', 3],
    ]);
    expect(await summary()).toEqual({ interactions: 5, undocumented: 3, diffs: 0 });

    // A documentation commit: the endpoint leaves the undocumented view; its traffic conforms.
    expect(await diffs()).toEqual([]);
    await commit('POST', '/posts');
    expect(await undocumented()).toEqual([
      ['GET /health', 1],
      ['GET /posts', 1],
    ]);
    expect(await diffs()).toEqual([]);

    // A drifting body in a new batch is a diff on the next read; a new version documenting it ends it.
    await send([{ ...created, request: { title: 't', tags: ['x'] } }]);
    expect(await diffs()).toEqual([['POST /posts', '1.0', ['added $.tags']]]);
    expect(await summary()).toEqual({ interactions: 6, undocumented: 2, diffs: 1 });
    await commit('POST', '/posts');
    expect(await diffs()).toEqual([]);
    await send([{ ...created, request: { title: 't', tags: ['x'], draft: true } }]);
    expect(await diffs()).toEqual([['POST /posts', '1.1', ['added $.draft']]]);

    // Rules in effect change (reported through the other replica): ignored traffic disappears at once.
    await setRules(['GET /health', 'POST /posts']);
    expect(await undocumented()).toEqual([['GET /posts', 1]]);
    expect(await diffs()).toEqual([]);
    expect(await summary()).toEqual({ interactions: 1, undocumented: 1, diffs: 0 });
    // And back: the earlier rules' views are computed again, not mixed up with these.
    await setRules([]);
    expect(await undocumented()).toEqual([
      ['GET /health', 1],
      ['GET /posts', 1],
    ]);
    expect(await diffs()).toEqual([['POST /posts', '1.1', ['added $.draft']]]);
  });

  it('show a new batch even when an old batch id of the capture was pruned in between', async () => {
    const db = new pg.Client({ connectionString: reader.databaseUrl });
    await db.connect();
    try {
      // A batch of this capture whose id is due for pruning (as if committed 40 days ago), then another one.
      const old = batchMessage(captureId, [{ method: 'GET', path: '/old', status: 200, response: { ok: true } }]);
      expect(await agent.request(old)).toEqual({ type: 'ack', batchId: old.batchId });
      await db.query(`UPDATE processed_batches SET committed_at = now() - interval '40 days' WHERE batch_id = $1`, [
        old.batchId,
      ]);
      await send([{ method: 'GET', path: '/other', status: 200, response: { ok: true } }]);
      expect(await undocumented()).toEqual(
        expect.arrayContaining([
          ['GET /old', 1],
          ['GET /other', 1],
        ]),
      );
      // Pruned, and a new batch: as many batch ids for the capture as before, but new traffic.
      await db.query('DELETE FROM processed_batches WHERE batch_id = $1', [old.batchId]);
      await send([{ method: 'GET', path: '/old', status: 200, response: { ok: true } }]);
      expect(await undocumented()).toContainEqual(['GET /old', 2]);
    } finally {
      await db.end();
    }
  });

  it('answer an unknown capture with 404 whatever is kept', async () => {
    const missing = await reader.api<{ error: { code: string } }>(
      'GET',
      '/projects/cache/captures/00000000-0000-4000-8000-000000000000/undocumented',
    );
    expect(missing.status).toBe(404);
  });
});
