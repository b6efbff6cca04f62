import type {
  DiffResponse,
  DocumentationResponse,
  EndpointResponse,
  ObservedEndpointResponse,
  ProjectResponse,
  TokenResponse,
} from '@spectator/shared';
import {
  batchMessage,
  connectTestAgent,
  helloMessage,
  type TestAgent,
  type TestExchange,
} from './support/agent-client';
import { sqlOn, startTestBackend, type TestBackend } from './support';

// Instance counts travel beside a body's fingerprint (docs/shapes.md): a list of one record and a
// list of three are one observation row, and the row adds up how many objects its exchanges showed.

let backend: TestBackend;
let agent: TestAgent;
let capture = '';

const list = (records: object[]): TestExchange => ({ method: 'GET', path: '/items', status: 200, response: records });

async function send(exchanges: TestExchange[]): Promise<void> {
  const batch = batchMessage(capture, exchanges);
  expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
}

async function newCapture(): Promise<void> {
  const id = crypto.randomUUID();
  expect(
    await agent.request({
      type: 'capture',
      capture: { id, startedAt: new Date().toISOString(), reason: 'command-restart' },
      previous: { id: capture, endedAt: new Date().toISOString() },
    }),
  ).toEqual({ type: 'capture-ended', captureId: capture });
  capture = id;
}

async function get<T>(route: string): Promise<T> {
  const { status, body } = await backend.api<T>('GET', `/projects/counts${route}`);
  expect(status).toBe(200);
  return body;
}

/** The capture's observation rows of GET /items: their counts and response instance extras. */
function rows(): Promise<Array<{ count: string; extras: string | null }>> {
  return sqlOn(
    backend.databaseUrl,
    `SELECT count::text, response_instances AS extras FROM observations WHERE capture_id = $1 AND path = '/items' ORDER BY count`,
    [capture],
  );
}

/** Documents GET /items with its bodies from the capture's traffic; its documentation after the commit. */
async function documentItems(): Promise<EndpointResponse | undefined> {
  const commit = await backend.api<DocumentationResponse>('POST', '/projects/counts/documentation', {
    captureId: capture,
    endpoints: [{ method: 'GET', path: '/items', documentBodies: true }],
  });
  expect(commit.status).toBe(201);
  return (await get<EndpointResponse[]>('/endpoints')).find((e) => e.path === '/items');
}

const requiredOf = (shape: unknown): string[] | undefined =>
  (shape as { items?: { required?: string[] } } | null)?.items?.required;

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'counts', name: 'Counts' })).status).toBe(
    201,
  );
  const token = (await backend.api<TokenResponse>('POST', '/projects/counts/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage();
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  capture = hello.capture.id;
});
afterAll(async () => {
  await agent?.close();
  await backend?.close();
});

describe('instance counts beside the fingerprint', () => {
  it('stores lists of one, two and three records of one structure as one row, their objects added up exactly', async () => {
    // Two answers of one structure, each a list of two records, one of them without `note`: the
    // body varied, so only six objects claim `id` required. The counts come in batches and meet in
    // the row's upsert.
    await send([list([{ id: 1, note: 'a' }, { id: 2 }])]);
    expect(await rows()).toEqual([{ count: '1', extras: '1' }]);
    const observed = (): Promise<ObservedEndpointResponse> =>
      get<ObservedEndpointResponse>(`/captures/${capture}/observed?method=GET&path=/items`);
    expect(requiredOf((await observed()).responses[0]?.shape)).toBeUndefined();
    await send([list([{ id: 3 }, { id: 4, note: 'b' }])]);
    expect(await rows()).toEqual([{ count: '2', extras: '2' }]);
    // Four objects: not enough once a body varied (they were until session 22).
    expect(requiredOf((await observed()).responses[0]?.shape)).toBeUndefined();
    // Two answers more, five records beyond one each: the extras add up to five (2 + 3), no further.
    await send([list([{ id: 5, note: 'c' }, { id: 6 }, { id: 7 }]), list([{ id: 8 }, { id: 9, note: 'd' }])]);
    expect(await rows()).toEqual([{ count: '4', extras: '5' }]);
    expect(requiredOf((await observed()).responses[0]?.shape)).toEqual(['id']);
    // From six exchanges on, every place has six objects: the row keeps no extras.
    await send([list([{ id: 10 }, { id: 11, note: 'e' }]), list([{ id: 12, note: 'f' }, { id: 13 }])]);
    expect(await rows()).toEqual([{ count: '6', extras: null }]);
    expect(requiredOf((await observed()).responses[0]?.shape)).toEqual(['id']);
  });

  it('claims no field of one error answer required, the fields of one success answer required', async () => {
    await newCapture();
    const answer = (path: string, status: number): TestExchange => ({
      method: 'GET',
      path,
      status,
      response: { code: status, message: 'text' },
    });
    await send([answer('/notes', 200), answer('/notes', 404), answer('/drafts', 404), answer('/drafts', 404)]);
    const required = async (path: string): Promise<Record<number, string[] | undefined>> => {
      const seen = await get<ObservedEndpointResponse>(`/captures/${capture}/observed?method=GET&path=${path}`);
      return Object.fromEntries(
        seen.responses.map((r) => [r.status, (r.shape as { required?: string[] } | null)?.required]),
      );
    };
    // One 404 alone tells no required field; two 404s with the same fields do, as one 200 does.
    expect(await required('/notes')).toEqual({ 200: ['code', 'message'], 404: undefined });
    expect(await required('/drafts')).toEqual({ 404: ['code', 'message'] });
  });

  it('counts exchanges sampled out unshaped at the top and at the objects every shaped one had under it', async () => {
    await newCapture();
    // Five POSTs shaped (one without `note`: the body varied) and four counted unshaped (sampled out under load).
    const post = (note: boolean): TestExchange => ({
      method: 'POST',
      path: '/checks',
      status: 201,
      request: { person: { name: 'n', address: { city: 'c' } }, ...(note ? { note: 'x' } : {}) },
    });
    const batch = batchMessage(capture, [post(true), { ...post(false), count: 4 }]);
    const shaped = batch.observations[1]!;
    batch.observations.push({ ...shaped, request: { contentType: 'application/json', unshaped: true }, count: 4 });
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    const seen = await get<ObservedEndpointResponse>(`/captures/${capture}/observed?method=POST&path=/checks`);
    type Schema = { required?: string[]; properties?: Record<string, Schema> };
    const request = seen.request?.shape as Schema | null | undefined;
    // Nine bodies had `person` and its `address`, five were shaped: nine objects at each place, six claim.
    expect(request?.required).toEqual(['person']);
    expect(request?.properties?.person?.required).toEqual(['address', 'name']);
    expect(request?.properties?.person?.properties?.address?.required).toEqual(['city']);
  });

  it('adds up the counts of literal rows regrouped under their template', async () => {
    await newCapture();
    const members = (team: string): TestExchange => ({
      method: 'GET',
      path: `/teams/${team}/members`,
      status: 200,
      response: [{ id: 1 }, { id: 2 }],
    });
    await send([members('erin'), members('frank')]);
    agent.send({ type: 'learned', captureId: capture, templates: ['/teams/{team}/members'] });
    // Messages are handled in order: this batch's ack comes after the regrouping.
    await send([{ method: 'GET', path: '/health', status: 204 }]);
    const regrouped = await sqlOn<{ path: string; count: string; extras: string | null }>(
      backend.databaseUrl,
      `SELECT path, count::text, response_instances AS extras FROM observations WHERE capture_id = $1 AND path LIKE '/teams/%'`,
      [capture],
    );
    // Two lists of two records: two exchanges and one record beyond one each.
    expect(regrouped).toEqual([{ path: '/teams/{team}/members', count: '2', extras: '2' }]);
  });

  it('adds extras digit by digit, capped at 5, in PL/pgSQL (no query planned per call)', async () => {
    // The SQL function it replaced (issue 20: a sub-SELECT, so planned on every call), as reference.
    const texts = [null, '', '0', '1', '5', '12', '345', '0505', '1234512345'];
    const pairs = await sqlOn<{ got: string | null; want: string | null }>(
      backend.databaseUrl,
      `SELECT add_instances(a, b) AS got,
              CASE WHEN a IS NULL OR a = '' THEN b WHEN b IS NULL OR b = '' THEN a
              ELSE (SELECT string_agg(least(coalesce(nullif(substr(a, i, 1), ''), '0')::int
                                            + coalesce(nullif(substr(b, i, 1), ''), '0')::int, 5)::text, '' ORDER BY i)
                      FROM generate_series(1, greatest(length(a), length(b))) AS i) END AS want
         FROM unnest($1::text[]) AS a CROSS JOIN unnest($1::text[]) AS b`,
      [texts],
    );
    expect(pairs).toHaveLength(texts.length ** 2);
    for (const { got, want } of pairs) expect(got).toBe(want);
    expect(
      await sqlOn(
        backend.databaseUrl,
        `SELECT add_instances('123', '45') AS a, sum_instances(x) AS s FROM unnest($1::text[]) x`,
        [['12', null, '3', '0041']],
      ),
    ).toEqual([{ a: '553', s: '4241' }]);
    expect(
      await sqlOn(
        backend.databaseUrl,
        `SELECT l.lanname AS language FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang WHERE p.proname = 'add_instances'`,
      ),
    ).toEqual([{ language: 'plpgsql' }]);
  });

  it('never moves a version on counts alone: other list lengths of a documented structure change nothing', async () => {
    await newCapture();
    const record = (id: number): object => ({ id, title: `t${id}` });
    await send([list([1, 2, 3, 4, 5].map(record))]);
    const documented = await documentItems();
    expect(documented?.version).toBe('1.0');
    expect(requiredOf(documented?.responses[0]?.shape)).toEqual(['id', 'title']);

    await newCapture();
    await send([list([record(1)]), list([record(1), record(2)]), list([1, 2, 3].map(record))]);
    // One row: the three lengths share the documented structure's fingerprint.
    expect((await rows()).map((row) => row.count)).toEqual(['3']);
    expect(await get<DiffResponse[]>(`/captures/${capture}/diffs`)).toEqual([]);
    const after = await documentItems();
    expect(after?.version).toBe('1.0');
    expect(after?.responses).toEqual(documented?.responses);
  });
});
