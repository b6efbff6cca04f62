import { fingerprint, inferShape } from '@spectator/shared';
import { parseAgentMessage, validateShape, WireError } from './wire-validation';

const capture = {
  id: '5b3c2a6e-8f1d-4c1e-9a7b-0d2e4f6a8b10',
  startedAt: '2026-01-01T00:00:00.000Z',
  reason: 'agent-start',
};
const observation = {
  method: 'POST',
  path: '/posts',
  status: 201,
  query: ['b', 'a', 'a'],
  requestHeaders: ['content-type'],
  responseHeaders: [],
  request: { contentType: 'application/json', shape: 'abc' },
  response: null,
  count: 2,
  firstSeen: '2026-01-01T00:00:00.000Z',
  lastSeen: '2026-01-01T00:00:01.000Z',
};
const runtime = { ttfb: { '13': 2 }, ttlb: { '14': 1 }, clientLeft: 1 };
const failure = {
  method: 'GET',
  path: '/posts',
  status: 503,
  count: 3,
  firstSeen: '2026-01-01T00:00:00.000Z',
  lastSeen: '2026-01-01T00:00:01.000Z',
  elapsed: { '-4': 3 },
};
const batch = {
  type: 'batch',
  batchId: '0c6f1d9e-3b2a-4f5e-8d7c-1a2b3c4d5e6f',
  captureId: capture.id,
  shapes: {},
  observations: [observation],
};

function problem(message: unknown): string {
  try {
    parseAgentMessage(typeof message === 'string' ? message : JSON.stringify(message));
  } catch (error) {
    if (error instanceof WireError) return error.message;
    throw error;
  }
  throw new Error('accepted');
}

describe('parseAgentMessage', () => {
  it('accepts a valid batch and keeps name lists sorted and unique', () => {
    const parsed = parseAgentMessage(JSON.stringify(batch));
    expect(parsed).toMatchObject({ type: 'batch', observations: [{ query: ['a', 'b'], count: 2 }] });
  });

  it("keeps the instance counts beside a body's fingerprint", () => {
    const counted = { ...observation, response: { contentType: 'a/json', shape: 'abc', instances: '0501' } };
    const parsed = parseAgentMessage(JSON.stringify({ ...batch, observations: [counted] }));
    expect(parsed).toMatchObject({ observations: [{ response: { shape: 'abc', instances: '0501' } }] });
  });

  it("keeps a row's consumers (pseudonyms, counts, last calls) and its overflow", () => {
    const consumers = [{ id: '0123456789abcdef', count: 1, lastSeen: '2026-01-01T00:00:01.000Z' }];
    const parsed = parseAgentMessage(
      JSON.stringify({ ...batch, observations: [{ ...observation, consumers, consumersOverflow: 1 }] }),
    );
    expect(parsed).toMatchObject({ observations: [{ consumers, consumersOverflow: 1 }] });
  });

  it.each([
    [
      'a value instead of a pseudonym',
      [{ id: 'canary-api-key-1', count: 1, lastSeen: '2026-01-01T00:00:00.000Z' }],
      undefined,
      'observations[0].consumers[0].id must be a pseudonym of 16 hexadecimal digits',
    ],
    [
      'a value riding along',
      [{ id: '0123456789abcdef', count: 1, lastSeen: '2026-01-01T00:00:00.000Z', key: 'canary' }],
      undefined,
      'observations[0].consumers[0].key is not allowed (a consumer is a pseudonym, a count and a time)',
    ],
    [
      'the same consumer twice',
      [
        { id: '0123456789abcdef', count: 1, lastSeen: '2026-01-01T00:00:00.000Z' },
        { id: '0123456789abcdef', count: 1, lastSeen: '2026-01-01T00:00:00.000Z' },
      ],
      undefined,
      'observations[0].consumers[1].id is named twice in the row',
    ],
    [
      'more calls than the row',
      [{ id: '0123456789abcdef', count: 2, lastSeen: '2026-01-01T00:00:00.000Z' }],
      1,
      "observations[0].consumers count 3 calls, more than the row's 2",
    ],
    [
      'too many consumers',
      Array.from({ length: 65 }, (_, i) => ({
        id: i.toString(16).padStart(16, '0'),
        count: 1,
        lastSeen: '2026-01-01T00:00:00.000Z',
      })),
      undefined,
      'observations[0].consumers must be an array of at most 64 consumers',
    ],
  ])('refuses consumers with %s', (_what, consumers, consumersOverflow, message) => {
    expect(problem({ ...batch, observations: [{ ...observation, consumers, consumersOverflow }] })).toBe(message);
  });

  // Paths are written only when a problem is found (the valid hot path builds none): each names its whole path.
  const second = (row: Record<string, unknown>): unknown => ({ ...batch, observations: [observation, row] });
  const consumer = { id: '0123456789abcdef', count: 1, lastSeen: '2026-01-01T00:00:01.000Z' };
  it.each([
    [
      { ...observation, request: { contentType: 7 } },
      'observations[1].request.contentType must be a string of at most 200 characters',
    ],
    [
      { ...observation, response: { contentType: 'a/b', shape: '?' } },
      'observations[1].response.shape has an invalid format',
    ],
    [
      { ...observation, request: { contentType: 'a/b', tooLarge: false } },
      'observations[1].request.tooLarge must be true when present',
    ],
    [
      { ...observation, request: { contentType: 'a/b', instances: '1' } },
      'observations[1].request.instances is only allowed with a shape',
    ],
    [
      { ...observation, response: { contentType: 'a/b', shape: 'abc', instances: '060' } },
      'observations[1].response.instances must be digits 0-5 ending in 1-5 (objects beyond one per exchange at each object place), at most 20000',
    ],
    [{ ...observation, response: undefined }, 'observations[1].response is required (null for no body)'],
    [{ ...observation, request: [] }, 'observations[1].request must be an object'],
    [{ ...observation, query: ['a', 1] }, 'observations[1].query[1] must be a string of at most 256 characters'],
    [{ ...observation, responseHeaders: 'x' }, 'observations[1].responseHeaders must be an array of at most 500 names'],
    [{ ...observation, firstSeen: 'x' }, 'observations[1].firstSeen must be an ISO 8601 time'],
    [{ ...observation, sunsetPast: 3 }, 'observations[1].sunsetPast must be an integer 1-2'],
    [{ ...observation, consumers: [consumer, 1] }, 'observations[1].consumers[1] must be an object'],
    [
      { ...observation, consumers: [{ ...consumer, count: 0 }] },
      'observations[1].consumers[0].count must be an integer 1-2',
    ],
    [
      { ...observation, consumers: [{ ...consumer, lastSeen: 'x' }] },
      'observations[1].consumers[0].lastSeen must be an ISO 8601 time',
    ],
    [
      { ...observation, consumers: [consumer], consumersOverflow: -1 },
      'observations[1].consumersOverflow must be an integer 0-2',
    ],
    [{ ...observation, runtime: [] }, 'observations[1].runtime must be an object'],
    [
      { ...observation, runtime: { ...runtime, ttlb: { '07': 1 } } },
      'observations[1].runtime.ttlb["07"] must be a bucket index -40–108',
    ],
  ])('names the whole path of a problem in a later row (%#)', (row, message) => {
    expect(problem(second(row))).toBe(message);
  });

  it('names the failure row of a histogram problem', () => {
    expect(problem({ ...batch, failures: [failure, { ...failure, elapsed: { '-4': 2, '-3': 2 } }] })).toBe(
      "failures[1].elapsed counts 4 exchanges, more than the row's 3",
    );
  });

  it.each([
    ['not JSON', '{', 'message is not valid JSON'],
    ['not an object', '[1]', 'message must be an object'],
    ['unknown type', { type: 'nope' }, 'type must be one of hello, batch, capture, capture-end, rules, learned'],
    ['bad batch id', { ...batch, batchId: 'x' }, 'batchId has an invalid format'],
    [
      'bad status',
      { ...batch, observations: [{ ...observation, status: 99 }] },
      'observations[0].status must be an integer 100-599',
    ],
    [
      'fractional count',
      { ...batch, observations: [{ ...observation, count: 1.5 }] },
      'observations[0].count must be an integer 1-1000000000',
    ],
    [
      'lower-case method',
      { ...batch, observations: [{ ...observation, method: 'get' }] },
      'observations[0].method has an invalid format',
    ],
    [
      'relative path',
      { ...batch, observations: [{ ...observation, path: 'posts' }] },
      'observations[0].path must start with /',
    ],
    [
      'missing request',
      { ...batch, observations: [{ ...observation, request: undefined }] },
      'observations[0].request is required (null for no body)',
    ],
    [
      'bad flag',
      { ...batch, observations: [{ ...observation, response: { contentType: 'text/html', tooLarge: 'yes' } }] },
      'observations[0].response.tooLarge must be true when present',
    ],
    [
      'bad time',
      { ...batch, observations: [{ ...observation, lastSeen: 'later' }] },
      'observations[0].lastSeen must be an ISO 8601 time',
    ],
    [
      '30 February',
      { ...batch, observations: [{ ...observation, firstSeen: '2026-02-30T00:00:00.000Z' }] },
      'observations[0].firstSeen must be an ISO 8601 time',
    ],
    [
      'month 13',
      { ...batch, observations: [{ ...observation, lastSeen: '2026-13-01T00:00:00Z' }] },
      'observations[0].lastSeen must be an ISO 8601 time',
    ],
    [
      'bad shape',
      { ...batch, shapes: { abc: { kind: 'weird' } } },
      'shapes["abc"].kind must be one of string, number, boolean, null, object, array, oneOf, unknown',
    ],
    [
      'bad environment',
      { type: 'hello', protocol: 1, agentId: 'a', agentVersion: '1', environment: { kind: 'moon' }, capture },
      'environment.kind must be one of local, ci, staging, production',
    ],
    [
      'bad capture reason',
      { type: 'capture', capture: { ...capture, reason: 'why' } },
      'capture.reason must be one of agent-start, command-restart, upstream-restart',
    ],
    [
      'more answers past their Sunset date than the row counts',
      { ...batch, observations: [{ ...observation, sunsetPast: observation.count + 1 }] },
      `observations[0].sunsetPast must be an integer 1-${observation.count}`,
    ],
    [
      'a Sunset date instead of a count',
      { ...batch, observations: [{ ...observation, sunsetPast: 'Sun, 06 Nov 1994 08:49:37 GMT' }] },
      `observations[0].sunsetPast must be an integer 1-${observation.count}`,
    ],
    [
      'NUL in a name',
      { ...batch, observations: [{ ...observation, requestHeaders: ['x-a\u0000b'] }] },
      'observations[0].requestHeaders[0] must not contain NUL characters',
    ],
    [
      'NUL in a shape field name',
      {
        ...batch,
        shapes: { abc: { kind: 'object', fields: [{ name: 'a\u0000', required: true, shape: { kind: 'string' } }] } },
      },
      'shapes["abc"].fields[0].name must not contain NUL characters',
    ],
    [
      'rules not strings',
      { type: 'rules', captureId: capture.id, rules: [1] },
      'rules[0] must be a string of at most 1000 characters',
    ],
    [
      'a path riding along the noise counts',
      { ...batch, unmatched: { requests: 1, paths: 1, path: '/.env' } },
      'unmatched.path is not allowed (unmatched carries counts only)',
    ],
    [
      'negative noise count',
      { ...batch, unmatched: { requests: -1, paths: 0 } },
      'unmatched.requests must be an integer 0-1000000000',
    ],
    [
      'a bucket out of range',
      { ...batch, observations: [{ ...observation, runtime: { ...runtime, ttfb: { '200': 1 } } }] },
      'observations[0].runtime.ttfb["200"] must be a bucket index -40–108',
    ],
    [
      'a negative bucket count',
      { ...batch, observations: [{ ...observation, runtime: { ...runtime, ttlb: { '3': -1 } } }] },
      'observations[0].runtime.ttlb["3"] must be an integer count 0-2',
    ],
    [
      'a histogram as an array',
      { ...batch, observations: [{ ...observation, runtime: { ...runtime, ttfb: [13, 2] } }] },
      'observations[0].runtime.ttfb must be an object of bucket → count',
    ],
    [
      'a histogram counting more exchanges than its row',
      { ...batch, observations: [{ ...observation, runtime: { ...runtime, ttfb: { '13': 2, '14': 1 } } }] },
      "observations[0].runtime.ttfb counts 3 exchanges, more than the row's 2",
    ],
    [
      'too many buckets',
      {
        ...batch,
        observations: [
          {
            ...observation,
            // Every bucket, and one more key: refused by number before the key is read.
            runtime: {
              ...runtime,
              ttfb: { ...Object.fromEntries(Array.from({ length: 149 }, (_, i) => [String(i - 40), 0])), x: 0 },
            },
          },
        ],
      },
      'observations[0].runtime.ttfb must hold at most 149 buckets',
    ],
    [
      'a missing ttlb',
      { ...batch, observations: [{ ...observation, runtime: { ttfb: {} } }] },
      'observations[0].runtime.ttlb must be an object of bucket → count',
    ],
    [
      'more left exchanges than the row has',
      { ...batch, observations: [{ ...observation, runtime: { ...runtime, clientLeft: 3 } }] },
      'observations[0].runtime.clientLeft must be an integer 0-2',
    ],
    [
      'a value riding along the timings',
      { ...batch, observations: [{ ...observation, runtime: { ...runtime, url: '/posts/1' } }] },
      'observations[0].runtime.url is not allowed (runtime carries timings and counts only)',
    ],
    ['failures not an array', { ...batch, failures: {} }, 'failures must be an array of at most 10000 rows'],
    [
      'a failure status the agent never answers',
      { ...batch, failures: [{ ...failure, status: 500 }] },
      'failures[0].status must be one of 0, 502, 503, 504',
    ],
    [
      'a failure without timings',
      { ...batch, failures: [{ ...failure, elapsed: undefined }] },
      'failures[0].elapsed must be an object of bucket → count',
    ],
    [
      'a failure with a relative path',
      { ...batch, failures: [{ ...failure, path: 'posts' }] },
      'failures[0].path must start with /',
    ],
    [
      'learned without templates',
      { type: 'learned', captureId: capture.id, templates: [] },
      'templates must be an array of 1-1000 templates',
    ],
    [
      'learned literal path',
      { type: 'learned', captureId: capture.id, templates: ['/users/alice'] },
      'templates[0] must hold at least one {parameter}',
    ],
    [
      'learned path not canonical',
      { type: 'learned', captureId: capture.id, templates: ['/users/{user}/', 'users/{user}'] },
      'templates[0] must be a canonical path template (e.g. /users/{user})',
    ],
    [
      'learned template with a strong identifier',
      { type: 'learned', captureId: capture.id, templates: ['/users/550e8400-e29b-41d4-a716-446655440000/{x}'] },
      'templates[0] must be a canonical path template (e.g. /users/{user})',
    ],
    [
      'learned hint not true',
      { type: 'learned', captureId: capture.id, templates: ['/users/{user}'], hint: 'yes' },
      'hint must be true when present',
    ],
    [
      'learned literals without hint',
      { type: 'learned', captureId: capture.id, templates: ['/users/{user}'], literals: ['/users/me'] },
      'literals are allowed with hint only',
    ],
    [
      'learned literal with a parameter',
      { type: 'learned', captureId: capture.id, templates: ['/users/{user}'], hint: true, literals: ['/users/{id}'] },
      'literals[0] must be a path without {parameter}',
    ],
    [
      'learned covers of another template',
      { type: 'learned', captureId: capture.id, templates: ['/users/{user}'], covers: { '/orgs/{org}': [] } },
      'covers["/orgs/{org}"] must be one of templates',
    ],
    [
      'learned covers naming a path, not a digest',
      {
        type: 'learned',
        captureId: capture.id,
        templates: ['/users/{user}'],
        covers: { '/users/{user}': ['/users/alice'] },
      },
      'covers["/users/{user}"][0] has an invalid format',
    ],
  ])('names the problem: %s', (_name, message, expected) => {
    expect(problem(message)).toBe(expected);
  });

  it('accepts ISO times with an offset, a 29 February of a leap year, and other forms Date.parse reads', () => {
    for (const time of [
      '2024-02-29T23:59:59.999Z',
      '2026-01-01T08:00:00+05:30',
      '2026-01-01T00:00:00.123456Z',
      '2026-01-01T00:00Z',
    ]) {
      expect(
        parseAgentMessage(JSON.stringify({ ...batch, observations: [{ ...observation, lastSeen: time }] })),
      ).toMatchObject({ observations: [{ lastSeen: time }] });
    }
    expect(problem({ ...batch, observations: [{ ...observation, lastSeen: '2025-02-29T00:00:00Z' }] })).toBe(
      'observations[0].lastSeen must be an ISO 8601 time',
    );
  });

  it('accepts noise counts and learned templates (unique, a hint flag kept)', () => {
    expect(parseAgentMessage(JSON.stringify({ ...batch, unmatched: { requests: 1234, paths: 51 } }))).toMatchObject({
      unmatched: { requests: 1234, paths: 51 },
    });
    const learned = {
      type: 'learned',
      captureId: capture.id,
      templates: ['/repos/{owner}/{repo}', '/users/{user}', '/users/{user}'],
      hint: true,
    };
    expect(parseAgentMessage(JSON.stringify(learned))).toEqual({
      ...learned,
      templates: ['/repos/{owner}/{repo}', '/users/{user}'],
    });
    const digest = 'a'.repeat(32);
    expect(
      parseAgentMessage(JSON.stringify({ ...learned, hint: undefined, covers: { '/users/{user}': [digest, digest] } })),
    ).toEqual({
      type: 'learned',
      captureId: capture.id,
      templates: ['/repos/{owner}/{repo}', '/users/{user}'],
      covers: { '/users/{user}': [digest] },
    });
    // A version number the agent kept literal (docs/paths.md, Version numbers).
    const version = { type: 'learned', captureId: capture.id, templates: ['/oauth2/1/file/{file}'] };
    expect(parseAgentMessage(JSON.stringify(version))).toEqual(version);
  });

  it('accepts timings and failures, and batches of agents that send neither', () => {
    expect(parseAgentMessage(JSON.stringify(batch))).not.toHaveProperty('failures');
    expect(parseAgentMessage(JSON.stringify(batch))).not.toHaveProperty('observations.0.runtime');
    const parsed = parseAgentMessage(
      JSON.stringify({ ...batch, observations: [{ ...observation, runtime }], failures: [failure] }),
    );
    expect(parsed).toMatchObject({ observations: [{ runtime }], failures: [failure] });
    // Without clientLeft, and with empty histograms (a row whose every exchange was cut short has no ttlb).
    expect(
      parseAgentMessage(
        JSON.stringify({ ...batch, observations: [{ ...observation, runtime: { ttfb: { '-40': 2 }, ttlb: {} } }] }),
      ),
    ).toMatchObject({ observations: [{ runtime: { ttfb: { '-40': 2 }, ttlb: {} } }] });
  });

  it('limits the observations of a batch', () => {
    const many = { ...batch, observations: Array.from({ length: 3 }, () => observation) };
    expect(() =>
      parseAgentMessage(JSON.stringify(many), { maxObservations: 2, maxShapes: 10, maxShapeNodes: 10 }),
    ).toThrow('observations must hold at most 2 observations');
  });
});

describe('validateShape', () => {
  it('accepts inferred shapes', () => {
    const shape = inferShape({ a: [1, { b: null }], c: 'x' });
    expect(validateShape(shape, 's', 1000)).toBe(shape);
    expect(fingerprint(shape)).toEqual(expect.any(String));
  });

  it('is bounded without recursion: a very deep shape is refused by size, not by the stack', () => {
    let deep: unknown = { kind: 'string' };
    for (let i = 0; i < 100_000; i++) deep = { kind: 'array', items: deep };
    expect(() => validateShape(deep, 's', 20_000)).toThrow('s has more than 20000 nodes');
  });

  it('refuses repeated field names', () => {
    const shape = {
      kind: 'object',
      fields: [
        { name: 'a', required: true, shape: { kind: 'string' } },
        { name: 'a', required: true, shape: { kind: 'number' } },
      ],
    };
    expect(() => validateShape(shape, 's', 100)).toThrow('s.fields[1].name repeats a field name');
  });
});
