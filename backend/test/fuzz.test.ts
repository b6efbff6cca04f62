import type { ProjectResponse, TokenResponse } from '@spectator/shared';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { startTestBackend, type TestBackend } from './support';
import { connectTestAgent, helloMessage } from './support/agent-client';
import { MAX_INPUT_DEPTH } from '../src/common/validation';

// Every route of the service's own OpenAPI document gets random path parameters, query values and
// bodies (random JSON, objects with the route's own field names holding random values, bytes that
// are not JSON, other media types). Whatever arrives, the answer is below 500 and, when an error,
// the standard error body. The document is the list of routes, so a new route is covered without
// touching this test. FUZZ_RUNS (60 per route) and FUZZ_SEED tune and replay it. Every route gets
// FUZZ_FLOOR runs (10) whatever the time; the runs past them share FUZZ_SECONDS (90 s), so a loaded
// machine runs fewer (said at the end) instead of passing the test's timeout.

interface Operation {
  method: string;
  path: string;
  query: string[];
  fields: string[];
}

let backend: TestBackend;
let operations: Operation[];
let captureId: string;

const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 60);
/** Runs every route gets, however long they take (FLOOR_RUNS at a time after them, while the budget lasts). */
const FLOOR_RUNS = Math.min(RUNS_PER_OPERATION, Number(process.env.FUZZ_FLOOR ?? 10));
/** Time the runs past the floor may take in all, shared among the routes not yet run. */
const BUDGET_MS = Number(process.env.FUZZ_SECONDS ?? 90) * 1_000;
/** The test's bound: the budget and the floor (60 runs of every route take ~20 s in all on a quiet machine, the floor a sixth). */
const TEST_MS = 300_000;

type OpenApiSchema = { properties?: Record<string, unknown>; $ref?: string };
type OpenApiDocument = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ name: string; in: string }>;
        requestBody?: { content?: Record<string, { schema?: OpenApiSchema }> };
      }
    >
  >;
  components?: { schemas?: Record<string, OpenApiSchema> };
};

/** The operations of the service's OpenAPI document, with their query parameters and body field names. */
function operationsOf(document: OpenApiDocument): Operation[] {
  const resolve = (schema: OpenApiSchema | undefined): OpenApiSchema | undefined =>
    schema?.$ref ? document.components?.schemas?.[schema.$ref.split('/').at(-1) ?? ''] : schema;
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      fields: Object.keys(resolve(operation.requestBody?.content?.['application/json']?.schema)?.properties ?? {}),
    })),
  );
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'fz', name: 'fuzz' })).status).toBe(201);
  const document = await backend.api<OpenApiDocument>('GET', '/api/docs/openapi.json');
  operations = operationsOf(document.body);
  // A capture with traffic, so routes that take a capture id can also get a real one.
  const agentToken = (
    await backend.api<TokenResponse>('POST', '/projects/fz/tokens', { name: 'agent', scope: 'agent' })
  ).body.token as string;
  const agent = await connectTestAgent(backend.url, agentToken);
  const hello = helloMessage({ agentId: 'fuzz' });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  captureId = hello.capture.id;
  await agent.close();
});
afterAll(async () => {
  await backend?.close();
});

/** A path parameter: the real project or capture sometimes, else anything a client could send. */
function pathValue(name: string): fc.Arbitrary<string> {
  const real = name === 'p' ? fc.constant('fz') : fc.constantFrom(captureId, randomUUID());
  return fc.oneof(
    { arbitrary: real, weight: 3 },
    fc.uuid(),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom('..', '%', '%00', 'a'.repeat(300), 'a'.repeat(5_000), '-1', '0', '%ff', '__proto__', 'constructor'),
  );
}

/** A query value: text, a small or any integer, a date. */
const queryValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer({ min: -2, max: 120 }).map(String),
  fc.integer().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  // A NUL, which PostgreSQL refuses in text (it answered 500).
  fc.constantFrom('\u0000', 'a\u0000b'),
);

/** A body: random JSON, the route's own fields with random values, or bytes under some media type. */
function bodyFor(operation: Operation): fc.Arbitrary<{ text: string; type: string } | undefined> {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom('\u0000', { 'n\u0000': 'x' }));
  const fields =
    operation.fields.length > 0
      ? fc.dictionary(fc.constantFrom(...operation.fields), value, { maxKeys: operation.fields.length })
      : fc.object();
  const json = fc.oneof(
    value,
    fields,
    fc.record({
      captureId: fc.constant(captureId),
      endpoints: fc.array(fc.dictionary(fc.constantFrom('method', 'path', 'description', 'documentBodies'), value)),
    }),
  );
  // Hostile JSON (issue 15 item 11): deep nesting around the limit, prototype keys, huge numbers
  // and strings, long arrays, inside the route's own fields or as the whole body.
  const nested = fc
    .tuple(fc.integer({ min: 1, max: 2 * MAX_INPUT_DEPTH }), fc.constantFrom('[', '{"a":', '{"__proto__":'))
    .map(([depth, open]) => open.repeat(depth) + '1' + (open === '[' ? ']' : '}').repeat(depth));
  const hostile = fc.oneof(
    nested,
    fc.constantFrom(
      '{"__proto__":{"admin":true}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '1e999',
      '-0',
      '123456789012345678901234567890',
      '"\\ud800"',
    ),
    fc.integer({ min: 1, max: 200_000 }).map((n) => JSON.stringify('x'.repeat(n))),
    fc.integer({ min: 1, max: 20_000 }).map((n) => `[${'0,'.repeat(n)}0]`),
  );
  const inFields = fc
    .tuple(fc.constantFrom(...(operation.fields.length > 0 ? operation.fields : ['name'])), hostile)
    .map(([field, text]) => `{${JSON.stringify(field)}:${text}}`);
  return fc.oneof(
    fc.constant(undefined),
    json.map((v) => ({ text: JSON.stringify(v), type: 'application/json' })),
    fc.oneof(hostile, inFields).map((text) => ({ text, type: 'application/json' })),
    fc
      .tuple(
        fc.string({ maxLength: 200 }),
        fc.constantFrom(
          'application/json',
          'application/yaml',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/octet-stream',
        ),
      )
      .map(([text, type]) => ({ text, type })),
  );
}

// Issue 15 item 11: bodies nested 10^5 deep answered 500 (`Maximum call stack size exceeded` in
// class-transformer). Too-deep input is refused before validation, naming the limit.
describe('deeply nested bodies', () => {
  const deepArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
  const deepObject = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  it.each([
    ['POST', '/projects/fz/documentation'],
    ['POST', '/projects/fz/proposals'],
    ['POST', '/projects/fz/tokens'],
    ['POST', '/projects/fz/webhooks'],
    ['POST', '/projects'],
    ['POST', '/projects/fz/openapi/import'],
  ])('%s %s: 400 naming the depth limit', async (method, path) => {
    for (const [text, where] of [
      [deepArray(100_000), 'at [0][0][0]'],
      [deepObject(100_000), 'at a.a.a'],
      [`{"name":${deepArray(100_000)}}`, 'at name[0][0]'],
    ] as const) {
      const response = await fetch(`${backend.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${backend.adminToken}`, 'content-type': 'application/json' },
        body: text,
      });
      const body = (await response.json()) as { message: string };
      expect({ status: response.status, message: body.message }).toEqual({
        status: 400,
        message: expect.stringContaining(
          `body is nested more than ${MAX_INPUT_DEPTH} levels deep (the limit), ${where}`,
        ),
      });
    }
    // At the limit, the route's own validation answers (class-transformer copes).
    const atLimit = await fetch(`${backend.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${backend.adminToken}`, 'content-type': 'application/json' },
      body: `{"name":${deepArray(MAX_INPUT_DEPTH - 1)}}`,
    });
    expect(atLimit.status).toBe(400);
    expect(((await atLimit.json()) as { message: string }).message).not.toContain('levels deep');
  });

  it('a YAML OpenAPI document too', async () => {
    const yaml = `openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: ${deepArray(20_000)}\n`;
    const response = await fetch(`${backend.url}/api/v1/projects/fz/openapi/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${backend.adminToken}`, 'content-type': 'application/yaml' },
      body: yaml,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(
      /nested more than \d+ levels deep|not valid YAML/,
    );
  });
});

describe('every route of the service, with random input', () => {
  it(
    'never answers 500, and every error has the standard body',
    async () => {
      expect(operations.length).toBeGreaterThan(20);
      const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
      // Said first, so a run that dies (a timeout, a crash) still says how to replay it.
      console.log(`fuzz: seed ${seed} (replay with FUZZ_SEED=${seed})`);
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      const deadline = Date.now() + BUDGET_MS;
      /** Runs each route got (the floor, and as many more as its share of the budget allowed). */
      const runsOf: number[] = [];
      for (const [index, operation] of operations.entries()) {
        const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
        const request = fc.record({
          params: fc.tuple(...names.map(pathValue)),
          // Each declared query parameter may come, and now and then one the route does not know.
          query: fc
            .tuple(
              fc.record(Object.fromEntries(operation.query.map((name) => [name, queryValue])), { requiredKeys: [] }),
              fc.option(fc.record({ unknown: queryValue }), { freq: 5 }),
            )
            .map(([known, unknown]) => ({ ...known, ...unknown }) as Record<string, string>),
          body: bodyFor(operation),
        });
        runsOf[index] = 0;
        const property = fc.asyncProperty(request, async ({ params, query, body }) => {
          runsOf[index]! += 1;
          let path = operation.path;
          names.forEach((name, i) => (path = path.replace(`{${name}}`, encodeURIComponent(params[i] as string))));
          const search = new URLSearchParams(query).toString();
          const response = await fetch(`${backend.url}${path}${search ? `?${search}` : ''}`, {
            method: operation.method,
            headers: {
              authorization: `Bearer ${backend.adminToken}`,
              ...(body ? { 'content-type': body.type } : {}),
            },
            body: body && operation.method !== 'GET' ? body.text : undefined,
          });
          const text = await response.text();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
          const what = `${operation.method} ${path}${search ? `?${search}` : ''} ${body ? `${body.type} ${body.text.slice(0, 120)}` : ''} → ${response.status} ${text.slice(0, 200)}`;
          if (response.status >= 500) failures.push(what);
          if (response.status >= 400) {
            let error: { statusCode?: unknown; error?: unknown; message?: unknown } = {};
            try {
              error = JSON.parse(text) as typeof error;
            } catch {
              // not JSON: not the standard body either, reported below with the request
            }
            if (
              error.statusCode !== response.status ||
              typeof error.error !== 'string' ||
              typeof error.message !== 'string'
            )
              failures.push(`not the standard error body: ${what}`);
          }
        });
        // Anything else the property throws (a reset connection, a timeout) fails the run
        // with the seed and the operation, not only fast-check's own report.
        const fail = (error: unknown): never => {
          throw new Error(
            `fuzz: ${operation.method} ${operation.path} failed (replay with FUZZ_SEED=${seed}): ${(error as Error).message}`,
          );
        };
        // The floor, then more runs of as many (each with a seed of its own) while this route's
        // share of the budget lasts: a run is never cut short.
        await fc.assert(property, { numRuns: FLOOR_RUNS, seed }).catch(fail);
        const until = Date.now() + (deadline - Date.now()) / (operations.length - index);
        for (let more = 1; runsOf[index]! < RUNS_PER_OPERATION && Date.now() < until; more++)
          await fc
            .assert(property, {
              numRuns: Math.min(FLOOR_RUNS, RUNS_PER_OPERATION - runsOf[index]!),
              seed: (seed + more) % 2 ** 31,
            })
            .catch(fail);
      }
      const requests = [...statuses.values()].reduce((sum, count) => sum + count, 0);
      const errors500 = [...statuses].filter(([status]) => status >= 500).reduce((sum, [, count]) => sum + count, 0);
      const complete = runsOf.filter((runs) => runs >= RUNS_PER_OPERATION).length;
      console.log(
        `fuzz: ${requests} requests over ${operations.length} operations (seed ${seed}); ${complete} operations got all ${RUNS_PER_OPERATION} runs, the fewest ${Math.min(...runsOf)} (floor ${FLOOR_RUNS}, budget ${BUDGET_MS / 1_000} s); 5xx answers: ${errors500}; statuses ${JSON.stringify([...statuses].sort())}`,
      );
      // FUZZ_SEED=<seed> replays a failing run.
      expect({ seed, failures: failures.slice(0, 10) }).toEqual({ seed, failures: [] });
      expect(Math.min(...runsOf)).toBeGreaterThanOrEqual(FLOOR_RUNS);
    },
    TEST_MS,
  );
});
