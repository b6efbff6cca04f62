import type { BackendMessage, BatchMessage, ProjectResponse, TokenResponse } from '@spectator/shared';
import fc from 'fast-check';
import pg from 'pg';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';

// A valid batch with one part of it replaced (any field, at any depth, by any JSON value) or
// removed, sent on a real agent stream. The backend answers each with an ack or an error naming the
// problem; it keeps the connection (a valid batch after each bad one is acknowledged); and what
// the observations hold is exactly the sum of the batches it acknowledged: nothing of a refused
// batch is written, nothing acknowledged is missing.

let backend: TestBackend;
let token: string;
let db: pg.Client;

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'fz', name: 'fuzz' })).status).toBe(201);
  token = (await backend.api<TokenResponse>('POST', '/projects/fz/tokens', { name: 'agent', scope: 'agent' })).body
    .token as string;
  db = new pg.Client({ connectionString: backend.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await backend?.close();
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path into a JSON value (the root excluded), as lists of keys and indices. */
function pathsOf(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (value === null || typeof value !== 'object') return [];
  const entries: Array<[string | number, Json]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  return entries.flatMap(([key, child]) => [[...prefix, key], ...pathsOf(child, [...prefix, key])]);
}

/** A copy of `value` with the part at `path` replaced by `by`, or removed when `by` is undefined. */
function mutate(value: Json, path: ReadonlyArray<string | number>, by: Json | undefined): Json {
  const copy = structuredClone(value);
  let parent = copy as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, Json>;
  const last = path.at(-1) as string | number;
  if (by !== undefined) parent[last] = by;
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return copy;
}

/** Interactions a batch counts: the sum of its observations' counts. */
function countOf(batch: BatchMessage): number {
  return batch.observations.reduce((sum, o) => sum + o.count, 0);
}

const replacement = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    '',
    '\u0000',
    'x'.repeat(5000),
    '2026-02-30T00:00:00Z',
    '/posts/{id}',
    'GET',
    'application/json',
    -1,
    0,
    1e300,
    2 ** 53,
    1.5,
    Number.MAX_SAFE_INTEGER,
    [],
    {},
  ),
);

describe('agent stream with mutated batches', () => {
  it('acknowledges or refuses each, keeps the connection, and stores exactly what it acknowledged', async () => {
    let agent: TestAgent = await connectTestAgent(backend.url, token);
    const hello = helloMessage({ agentId: 'fuzz' });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    const captureId = hello.capture.id;
    let acknowledged = 0;
    const outcomes = { ack: 0, error: 0 };
    const problems: string[] = [];

    const send = async (message: Json): Promise<BackendMessage> => {
      if (agent.socket.readyState !== agent.socket.OPEN) {
        problems.push(`connection closed before ${JSON.stringify(message).slice(0, 200)}`);
        agent = await connectTestAgent(backend.url, token);
        await agent.request(helloMessage({ agentId: 'fuzz', capture: hello.capture }));
      }
      return agent.request(JSON.stringify(message), 10_000);
    };

    await fc.assert(
      fc.asyncProperty(
        fc.nat(),
        fc.option(replacement, { freq: 5 }),
        fc.integer({ min: 1, max: 4 }),
        async (pick, by, rows) => {
          const exchanges = Array.from({ length: rows }, (_, i) => ({
            method: 'POST',
            path: `/fuzz/${i}`,
            status: 201,
            request: { title: 't' },
            response: { id: 1 },
            count: i + 1,
          }));
          const valid = batchMessage(captureId, exchanges) as unknown as Json;
          const paths = pathsOf(valid);
          const path = paths[pick % paths.length] as Array<string | number>;
          const mutated = mutate(valid, path, by ?? undefined);
          const answer = await send(mutated);
          if (answer.type === 'ack') {
            outcomes.ack += 1;
            if (!answer.duplicate) acknowledged += countOf(mutated as unknown as BatchMessage);
          } else if (answer.type === 'error') {
            outcomes.error += 1;
            if (answer.message.length === 0) problems.push(`error without a message for ${path.join('.')}`);
          } else {
            problems.push(`unexpected answer ${answer.type} for ${path.join('.')}`);
          }
          // The stream is still usable: a valid batch right after is acknowledged.
          const next = batchMessage(captureId, exchanges);
          const after = await send(next as unknown as Json);
          if (after.type !== 'ack')
            problems.push(`valid batch after a mutated ${path.join('.')} got ${JSON.stringify(after)}`);
          else acknowledged += countOf(next);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 150), seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
    );
    await agent.close();

    const [stored] = (
      await db.query<{ total: string | null }>(
        `SELECT sum(o.count)::text AS total FROM observations o JOIN captures c ON c.id = o.capture_id JOIN projects p ON p.id = c.project_id WHERE p.slug = 'fz'`,
      )
    ).rows;
    expect(problems).toEqual([]);
    // Both kinds of answer happened, so the property tested something on each side.
    expect(outcomes.ack).toBeGreaterThan(0);
    expect(outcomes.error).toBeGreaterThan(0);
    expect(Number(stored?.total ?? 0)).toBe(acknowledged);
  });
});
