import type {
  CaptureResponse,
  DiffResponse,
  EndpointResponse,
  JsonSchema,
  ObservedEndpointResponse,
  ProposalResponse,
  UndocumentedEndpointResponse,
  VersionMatrixResponse,
} from '@spectator/shared';

/** Fixture payloads in the shared wire types, so a contract change breaks these tests at compile time. */
export const postSchema: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'number' }, title: { type: 'string' }, author: { type: 'string' } },
  required: ['author', 'id', 'title'],
};
export const postRequestSchema: JsonSchema = {
  type: 'object',
  properties: { title: { type: 'string' }, author: { type: 'string' } },
  required: ['author', 'title'],
};

export function capture(id: string, startedAt: string, counts: Partial<CaptureResponse> = {}): CaptureResponse {
  return {
    id,
    environment: { kind: 'local', name: 'local' },
    commit: '3f2c9a1d0b',
    build: null,
    pullRequest: null,
    startedAt,
    endedAt: null,
    interactions: 2,
    undocumented: 1,
    diffs: 0,
    rules: ['GET /', 'GET POST PUT /db', 'GET /favicon.ico', 'GET /script.js', 'GET /style.css'],
    unmatched: { requests: 0, paths: 0 },
    overflow: { requests: 0 },
    ...counts,
  };
}

/** `count` undocumented endpoints, `/resource-0000` … with varied methods. */
export function undocumented(count: number): UndocumentedEndpointResponse[] {
  const methods = ['GET', 'POST', 'PUT', 'DELETE'];
  return Array.from({ length: count }, (_, i) => ({
    method: methods[i % 4]!,
    path: `/resource-${String(i).padStart(4, '0')}/{itemId}`,
    interactions: 1 + (i % 7),
    count: 2 * (1 + (i % 7)),
  }));
}

export const observedPost: ObservedEndpointResponse = {
  method: 'POST',
  path: '/posts',
  interactions: 2,
  request: { contentType: 'application/json', shape: postRequestSchema },
  responses: [
    {
      status: 201,
      contentType: 'application/json',
      shape: {
        ...postSchema,
        properties: {
          ...postSchema.properties,
          tags: { oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] },
        },
      },
    },
  ],
  rejectedRequests: [],
  query: ['limit'],
  requestHeaders: ['content-type', 'user-agent', 'x-tenant'],
};

export const documentedPost: EndpointResponse = {
  id: 'ep-post',
  method: 'POST',
  path: '/posts',
  description: 'Create a new post. Accepts author, title as JSON in request body',
  version: '1.0',
  request: { contentType: 'application/json', shape: postRequestSchema },
  responses: [{ status: 201, contentType: 'application/json', shape: postSchema }],
  parameters: { query: [{ name: 'limit', required: false }], headers: [{ name: 'x-tenant', required: true }] },
  updatedAt: '2026-01-01T10:00:00Z',
};

export const postDiff: DiffResponse = {
  endpointId: 'ep-post',
  method: 'POST',
  path: '/posts',
  version: '1.0',
  interactions: 1,
  breaking: true,
  changes: [
    { change: 'added', in: 'request', at: '$.body', observed: { type: 'string' }, breaking: false },
    { change: 'removed', in: 'response', status: 201, at: '$.author', documented: { type: 'string' }, breaking: true },
    { change: 'added', in: 'query', at: 'page', breaking: false },
    {
      change: 'now optional',
      in: 'request',
      at: '$.title',
      documented: { type: 'string' },
      observed: { type: 'string' },
      breaking: false,
    },
  ],
};

/** A versions matrix of `rows` rows (CI, staging, production in turn) × `endpoints` columns, with N/A and drift. */
export function matrix(rows: number, endpoints: number): VersionMatrixResponse {
  const kinds = ['ci', 'staging', 'production'] as const;
  return {
    endpoints: Array.from({ length: endpoints }, (_, i) => ({
      id: `e${i}`,
      method: i % 3 ? 'GET' : 'POST',
      path: `/things-${i}/{thingId}`,
      version: '1.1',
    })),
    rows: Array.from({ length: rows }, (_, r) => {
      const kind = kinds[r % 3]!;
      return {
        kind,
        name: kind,
        commit: `c0ffee${r}`,
        lastSeen: '2026-01-01T10:00:00Z',
        ...(kind === 'ci' ? { pullRequest: String(100 + r) } : { build: `${kind[0]}-${r}` }),
      };
    }),
    cells: Array.from({ length: rows }, (_, r) =>
      Array.from({ length: endpoints }, (_, e) =>
        (r + e) % 5 === 0
          ? { version: 'N/A' }
          : (r * e) % 17 === 1
            ? { version: '1.0', drift: true }
            : { version: (r + e) % 2 ? '1.1' : '1.0' },
      ),
    ),
    runtime: Array.from({ length: rows }, (_, r) =>
      Array.from({ length: endpoints }, (_, e) => e)
        .filter((e) => (r + e) % 5 !== 0 && (r + e) % 3 === 0)
        .map((column) => ({ column, requests: 100 + column, errorRate: (column % 4) / 100, p95: 20 + column })),
    ),
    nextCursor: null,
  };
}

export function proposal(steps: ProposalResponse['steps']): ProposalResponse {
  return {
    id: 'pr-1',
    title: 'Add users',
    description: 'GET /users and POST /users',
    status: steps.length ? steps[steps.length - 1]!.step : 'Open',
    createdAt: '2026-01-01T09:00:00Z',
    createdBy: 'ana',
    endpoints: [
      {
        endpointId: 'e1',
        method: 'GET',
        path: '/users',
        fromVersion: '1.0',
        toVersion: '1.1',
        changes: [
          {
            change: 'added',
            in: 'response',
            status: 200,
            at: '$.nickname',
            observed: { type: 'string' },
            breaking: false,
          },
        ],
      },
    ],
    steps,
  };
}
