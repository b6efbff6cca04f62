// The reconstruction bench's scoring on small hand-made documents: a bench that scores wrong is
// worse than none, so each rule of lib/score.js and lib/openapi.js has a case that would fail.
import { flattenSchema, flattenValue, isInstanceOf, listOperations, templateKey } from '../lib/openapi';
import {
  countSet,
  observe,
  operationDiff,
  scoreDocument,
  summarize,
  formatTable,
  emptyCounts,
  addCounts,
} from '../lib/score';
import type { Exchange } from '../lib/send';

const pet = {
  type: 'object',
  required: ['id', 'name'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    tag: { type: 'string', nullable: true },
    owner: { $ref: '#/components/schemas/Owner' },
  },
};

const source = {
  openapi: '3.0.3',
  info: { title: 'pets', version: '1' },
  components: {
    schemas: {
      Pet: pet,
      Owner: {
        type: 'object',
        required: ['login'],
        properties: { login: { type: 'string' }, friend: { $ref: '#/components/schemas/Owner' } },
      },
    },
  },
  paths: {
    '/pets': {
      get: {
        parameters: [
          { in: 'query', name: 'limit', schema: { type: 'integer' } },
          { in: 'query', name: 'tag', schema: { type: 'string' } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } },
          },
        },
      },
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['name'],
                properties: { name: { type: 'string' }, tag: { type: 'string' } },
              },
            },
          },
        },
        responses: {
          '201': {
            description: 'made',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
          '422': { description: 'bad' },
        },
      },
    },
    '/pets/{petId}': {
      parameters: [{ in: 'path', name: 'petId', required: true, schema: { type: 'integer' } }],
      get: {
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
          '404': { description: 'none' },
        },
      },
    },
    '/users/{user}/repos': {
      get: {
        parameters: [{ in: 'path', name: 'user', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/users/me/repos': { get: { responses: { '200': { description: 'ok' } } } },
  },
};

function exchange(
  operation: number,
  method: string,
  path: string,
  status: number,
  response?: unknown,
  body?: unknown,
): Exchange {
  return {
    request: {
      operation,
      method,
      path,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      prefer: undefined,
    },
    url: `http://127.0.0.1:1${path}`,
    startedAt: '2026-01-01T00:00:00.000Z',
    ms: 1,
    status,
    responseHeaders: response === undefined ? {} : { 'content-type': 'application/json' },
    responseText: response === undefined ? '' : JSON.stringify(response),
  };
}

const onePet = { id: 1, name: 'rex', tag: null, owner: { login: 'alice' } };
// Operation indexes follow listOperations(source): 0 GET /pets, 1 POST /pets, 2 GET /pets/{petId}, 3 GET /users/{user}/repos, 4 GET /users/me/repos.
const traffic: Exchange[] = [
  exchange(0, 'GET', '/pets?limit=2&api_key=k', 200, [onePet]),
  exchange(1, 'POST', '/pets', 201, onePet, { name: 'rex', tag: 'dog' }),
  exchange(1, 'POST', '/pets', 422, { made: 'up' }, { name: 'rex', refused: true }),
  exchange(2, 'GET', '/pets/17', 200, onePet),
  exchange(3, 'GET', '/users/alice/repos', 200),
  exchange(3, 'GET', '/users/bob/repos', 200),
];

describe('templates', () => {
  it('reduces a path to its positions, names and trailing slashes aside', () => {
    expect(templateKey('/repos/{owner}/{repo}/')).toBe('/repos/{}/{}');
    expect(templateKey('//repos/{a}/{b}?x=1')).toBe('/repos/{}/{}');
    expect(templateKey('/files/{id}.json')).toBe('/files/{}.json');
    expect(templateKey('/')).toBe('/');
  });

  it('tells an instance of a template: literals equal, parameters taken by anything', () => {
    expect(isInstanceOf('/users/alice/repos', '/users/{}/repos')).toBe(true);
    expect(isInstanceOf('/users/{}/repos', '/users/{}/repos')).toBe(true);
    expect(isInstanceOf('/users/alice/issues', '/users/{}/repos')).toBe(false);
    expect(isInstanceOf('/users/alice', '/users/{}/repos')).toBe(false);
    expect(isInstanceOf('/{}/alice/repos', '/users/{}/repos')).toBe(false);
  });

  it('lists operations with path-item parameters merged', () => {
    const operations = listOperations(source);
    expect(operations.map((operation) => `${operation.method} ${operation.key}`)).toEqual([
      'GET /pets',
      'POST /pets',
      'GET /pets/{}',
      'GET /users/{}/repos',
      'GET /users/me/repos',
    ]);
    expect(operations[2]?.parameters.map((parameter) => parameter.name)).toEqual(['petId']);
  });
});

describe('flattenSchema', () => {
  it('writes fields as JSON paths with types and required flags, following $refs and stopping at a recursion', () => {
    const fields = flattenSchema(source, { type: 'array', items: { $ref: '#/components/schemas/Pet' } });
    expect([...fields.keys()].sort()).toEqual([
      '[]',
      '[].id',
      '[].name',
      '[].owner',
      '[].owner.friend',
      '[].owner.login',
      '[].tag',
    ]);
    expect(fields.get('[].id')).toEqual({ types: new Set(['number']), nullable: false, required: true });
    expect(fields.get('[].tag')).toEqual({ types: new Set(['string']), nullable: true, required: false });
    expect(fields.get('[].owner.login')?.required).toBe(true);
  });

  it('merges allOf and unites oneOf, required only where every branch requires it', () => {
    const fields = flattenSchema(
      {},
      {
        allOf: [
          { type: 'object', required: ['a'], properties: { a: { type: 'string' } } },
          { properties: { b: { type: ['integer', 'null'] } } },
        ],
        oneOf: [
          { type: 'object', required: ['c', 'd'], properties: { c: { type: 'string' }, d: { type: 'string' } } },
          { type: 'object', required: ['c'], properties: { c: { type: 'boolean' } } },
        ],
      },
    );
    expect(fields.get('a')?.required).toBe(true);
    expect(fields.get('b')).toEqual({ types: new Set(['number']), nullable: true, required: false });
    expect(fields.get('c')).toEqual({ types: new Set(['string', 'boolean']), nullable: false, required: true });
    expect(fields.get('d')?.required).toBe(false);
  });

  it("reads the types of oneOf and anyOf branches as the field's own (a 3.1 nullable written as oneOf)", () => {
    const fields = flattenSchema(
      { components: { schemas: { Id: { type: 'integer' } } } },
      {
        type: 'object',
        properties: {
          name: { oneOf: [{ type: 'string' }, { type: 'null' }] },
          id: { anyOf: [{ $ref: '#/components/schemas/Id' }, { type: 'string', format: 'uuid' }] },
        },
      },
    );
    expect(fields.get('name')).toEqual({ types: new Set(['string']), nullable: true, required: false });
    expect(fields.get('id')?.types).toEqual(new Set(['number', 'string']));
  });

  it('keeps the required fields of an object written nullable as oneOf [object, null]', () => {
    const fields = flattenSchema(
      {},
      {
        type: 'object',
        properties: {
          owner: {
            oneOf: [
              { type: 'object', required: ['login'], properties: { login: { type: 'string' } } },
              { type: 'null' },
            ],
          },
        },
      },
    );
    expect(fields.get('owner.login')?.required).toBe(true);
    expect(fields.get('owner')).toEqual({ types: new Set(['object']), nullable: true, required: false });
  });

  it('takes required from the object beside allOf parts, and from any part that requires a field', () => {
    const fields = flattenSchema(
      {},
      {
        required: ['id'],
        allOf: [
          { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
          { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          { type: 'object', properties: { name: { type: 'string' } } },
        ],
      },
    );
    expect(fields.get('id')?.required).toBe(true);
    expect(fields.get('name')?.required).toBe(true);
  });

  it('takes items of any kind (an array only ever seen empty) for no field', () => {
    const fields = flattenSchema({}, { type: 'object', properties: { tags: { type: 'array', items: {} } } });
    expect([...fields.keys()]).toEqual(['tags']);
  });

  it('reads a schema as deep as a value, no deeper', () => {
    let schema: Record<string, unknown> = { type: 'object', properties: { leaf: { type: 'string' } } };
    let value: unknown = { leaf: 'x' };
    for (let level = 0; level < 10; level++) {
      schema = { type: 'object', properties: { a: schema } };
      value = { a: value };
    }
    expect([...flattenSchema({}, schema).keys()]).toEqual([...flattenValue(value).keys()]);
  });

  it('reads the fields a value shows the same way', () => {
    expect([...flattenValue({ items: [{ id: 1 }, { id: 2, name: 'x' }], next: null }).entries()]).toEqual([
      ['items', new Set(['array'])],
      ['items[]', new Set(['object'])],
      ['items[].id', new Set(['number'])],
      ['items[].name', new Set(['string'])],
      ['next', new Set(['null'])],
    ]);
  });
});

describe('countSet', () => {
  it('credits what the source defines and the traffic showed, and holds nothing shown beyond the source against anyone', () => {
    const counts = { hitsP: 0, totalP: 0, hitsR: 0, totalR: 0 };
    // source a b c; shown a b x; contender a x y: a is right, x was shown beyond the source (not counted), y made up.
    countSet(counts, new Set(['a', 'x', 'y']), new Set(['a', 'b', 'c']), new Set(['a', 'b', 'x']));
    expect(counts).toEqual({ hitsP: 1, totalP: 2, hitsR: 1, totalR: 2 });
  });
});

describe('scoreDocument', () => {
  const operations = listOperations(source);
  const observations = observe(traffic);

  it('observes statuses, query names and fields per operation', () => {
    expect(observations.get(0)?.queryNames).toEqual(new Set(['limit', 'api_key']));
    expect(observations.get(1)?.statuses).toEqual(new Set([201, 422]));
    // The 422's body (with `refused`) was not accepted: it shows nothing of the request.
    expect([...(observations.get(1)?.requestFields.keys() ?? [])]).toEqual(['name', 'tag']);
    expect(observations.has(4)).toBe(false);
  });

  it('gives a perfect score to the source itself on the operations the traffic reached', () => {
    const summary = summarize(scoreDocument({ source, operations, observations, contender: source }));
    expect(summary.operations).toEqual({ precision: 4 / 5, recall: 1, f1: (2 * 0.8) / 1.8 });
    expect(summary.exploded).toBe(0);
    expect(summary.response).toMatchObject({ precision: 1, recall: 1, f1: 1, types: 1, required: 1 });
    expect(summary.request).toMatchObject({ precision: 1, recall: 1, types: 1, required: 1 });
    expect(summary.statuses).toMatchObject({ precision: 1, recall: 1 });
    expect(summary.query).toMatchObject({ precision: 1, recall: 1 });
  });

  it('counts literal copies as exploded, a wrong parameter position as a miss, and scores fields of the right operations', () => {
    const contender = {
      openapi: '3.1.0',
      paths: {
        '/pets': {
          get: {
            parameters: [
              { in: 'query', name: 'limit' },
              { in: 'query', name: 'api_key' },
              { in: 'query', name: 'invented' },
            ],
            responses: {
              '200': {
                content: {
                  'application/json': {
                    schema: {
                      type: 'array',
                      items: {
                        type: 'object',
                        required: ['id', 'name', 'tag', 'owner'],
                        properties: {
                          id: { type: 'string' },
                          name: { type: 'string' },
                          tag: { type: 'null' },
                          owner: { type: 'object', properties: { login: { type: 'string' } } },
                          extra: { type: 'string' },
                        },
                      },
                    },
                  },
                },
              },
              '500': { content: {} },
            },
          },
        },
        '/{id}/{petId}': { get: { responses: { '200': {} } } },
        '/users/alice/repos': { get: { responses: { '200': {} } } },
        '/users/bob/repos': { get: { responses: { '200': {} } } },
      },
    };
    const counts = scoreDocument({ source, operations, observations, contender });
    expect(counts).toMatchObject({
      sourceOperations: 4,
      contenderOperations: 4,
      rightOperations: 1,
      exploded: 1,
      literalCopies: 2,
    });
    const summary = summarize(counts);
    expect(summary.operations.precision).toBe(0.25);
    expect(summary.operations.recall).toBe(0.25);
    // Response of GET /pets 200: source [] id name tag owner owner.login owner.friend; the contender has
    // [] id name tag owner owner.login (right) and extra (made up): precision 6/7; recall 6/6 of the shown ones.
    expect(counts.response.set).toEqual({ hitsP: 6, totalP: 7, hitsR: 6, totalR: 6 });
    // id is a string where the source says integer; tag was only ever null, so it tells no type and is not judged.
    expect(counts.response.typeRight).toBe(4);
    expect(counts.response.typeTotal).toBe(5);
    // tag and owner are required here, optional in the source; owner.login optional here, required there.
    expect(counts.response.requiredRight).toBe(3);
    // 500 was made up; api_key was sent but is no parameter of the source (not held against it); invented was made up.
    expect(counts.statuses).toEqual({ hitsP: 1, totalP: 2, hitsR: 1, totalR: 1 });
    expect(counts.query).toEqual({ hitsP: 1, totalP: 2, hitsR: 1, totalR: 1 });
  });

  it('judges types where the traffic showed a value other than null, required flags where it showed the field', () => {
    /** A document of one operation, GET /things, answering 200 with this JSON schema. */
    const answering = (openapi: string, schema: unknown) => ({
      openapi,
      paths: { '/things': { get: { responses: { '200': { content: { 'application/json': { schema } } } } } } },
    });
    const doc = answering('3.0.3', {
      type: 'object',
      required: ['a', 'b'],
      properties: {
        a: { type: 'string' },
        b: { type: 'string', nullable: true },
        c: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } },
        d: { type: 'integer' },
      },
    });
    const contender = answering('3.1.0', {
      type: 'object',
      required: ['a', 'b', 'c', 'd'],
      properties: {
        a: { type: 'string' },
        b: { type: 'null' },
        c: { type: 'array', items: {} },
        d: { type: 'string' },
      },
    });
    // b only ever null, c only ever empty, d never sent: the traffic tells b's and c[]'s types and d's flag to no one.
    const shown = observe([exchange(0, 'GET', '/things', 200, { a: 'x', b: null, c: [] })]);
    const counts = scoreDocument({ source: doc, operations: listOperations(doc), observations: shown, contender });
    expect(counts.response).toMatchObject({ typeRight: 2, typeTotal: 2, requiredRight: 2, requiredTotal: 3 });
  });

  it('adds counts over documents and prints one row per score', () => {
    const one = scoreDocument({ source, operations, observations, contender: source });
    const both = addCounts(addCounts(emptyCounts(), one), one);
    expect(both.documents).toBe(2);
    expect(both.rightOperations).toBe(2 * one.rightOperations);
    const table = formatTable([
      { name: 'source', counts: both },
      { name: 'nothing', counts: scoreDocument({ source, operations, observations, contender: { paths: {} } }) },
    ]);
    expect(table).toContain('| score | source | nothing |');
    expect(table).toContain('| operations: recall | 1.00 | 0.00 |');
    expect(table).toContain('| operations: precision | 0.80 | n/a |');
  });
});

describe('operationDiff', () => {
  it('names the source operations reached but not matched, and the operations matching no source operation', () => {
    const operations = listOperations(source);
    const contender = {
      paths: {
        '/pets': { get: { responses: {} } },
        '/users/alice/repos': { get: { responses: {} } },
        '/users/me/repos': { get: { responses: {} } },
      },
    };
    expect(operationDiff({ operations, observations: observe(traffic), contender })).toEqual({
      missed: ['POST /pets', 'GET /pets/{petId}', 'GET /users/{user}/repos'],
      extra: ['GET /users/alice/repos'],
    });
  });
});
