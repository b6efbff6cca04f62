import { fromJsonSchema } from '@spectator/shared';
import { DomainError } from '../common/errors';
import { importOpenApi, MAX_IMPORTED_ENDPOINTS, MAX_SCHEMA_NODES } from './openapi-import';

/** A small but realistic OpenAPI 3.0 document: refs, allOf, a recursive schema, a map, a form body, 204, default. */
const petstore = {
  openapi: '3.0.3',
  info: { title: 'Petstore', version: '2.1.0', description: 'Pets and their owners.' },
  paths: {
    '/pets': {
      get: {
        summary: 'List pets',
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Pet' } } } },
          },
          default: { $ref: '#/components/responses/Error' },
        },
      },
      post: {
        summary: 'Create a pet',
        description: 'The new pet is returned with its id.',
        requestBody: { $ref: '#/components/requestBodies/NewPet' },
        responses: {
          '201': {
            description: 'created',
            content: { 'application/json; charset=utf-8': { schema: { $ref: '#/components/schemas/Pet' } } },
          },
        },
      },
    },
    '/pets/{petId}': {
      delete: { responses: { '204': { description: 'gone' }, '4XX': { description: 'no' } } },
      put: {
        requestBody: {
          content: {
            'text/plain': {},
            'application/x-www-form-urlencoded': {
              schema: { type: 'object', properties: { name: { type: 'string' } } },
            },
          },
        },
        responses: { '200': { description: 'ok', content: { 'text/plain': {} } } },
      },
    },
    '/tree': {
      get: {
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
          },
        },
      },
    },
    '/odd': {
      get: {
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { not: { type: 'string' } } } } },
        },
      },
    },
    '/only-default': { get: { responses: { default: { description: 'whatever' } } } },
  },
  components: {
    schemas: {
      NewPet: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, tag: { type: 'string', nullable: true } },
      },
      Pet: {
        allOf: [
          { $ref: '#/components/schemas/NewPet' },
          {
            type: 'object',
            required: ['id'],
            properties: {
              id: { type: 'integer', format: 'int64' },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
        ],
        discriminator: { propertyName: 'name' },
      },
      Node: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
        },
      },
      Error: { type: 'object', properties: { message: { type: 'string' } } },
    },
    requestBodies: { NewPet: { content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } } } },
    responses: {
      Error: {
        description: 'error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    },
  },
};

const info = { title: 't', version: '1' };
const shapeOf = (schema: Record<string, unknown> | undefined) => fromJsonSchema(schema);

describe('importOpenApi', () => {
  const imported = importOpenApi(petstore);
  const endpoint = (method: string, path: string) =>
    imported.endpoints.find((e) => e.method === method && e.path === path);

  it('names the proposal after the document and keeps its description', () => {
    expect(imported.title).toBe('Import Petstore 2.1.0 from OpenAPI');
    expect(imported.description).toBe('Pets and their owners.');
    expect(imported.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
      'GET /pets',
      'POST /pets',
      'DELETE /pets/{petId}',
      'PUT /pets/{petId}',
      'GET /tree',
      'GET /odd',
    ]);
  });

  it('resolves $refs (schemas, request bodies, responses) and merges allOf of objects into one closed object', () => {
    const post = endpoint('POST', '/pets');
    expect(post?.description).toBe('Create a pet\n\nThe new pet is returned with its id.');
    expect(post?.request?.contentType).toBe('application/json');
    expect(shapeOf(post?.request?.schema)).toEqual({
      kind: 'object',
      fields: [
        { name: 'name', required: true, shape: { kind: 'string' } },
        { name: 'tag', required: false, shape: { kind: 'oneOf', options: [{ kind: 'string' }, { kind: 'null' }] } },
      ],
    });
    expect(post?.responses).toHaveLength(1);
    expect(post?.responses[0]?.status).toBe(201);
    expect(post?.responses[0]?.contentType).toBe('application/json; charset=utf-8');
    expect(shapeOf(post?.responses[0]?.schema)).toEqual({
      kind: 'object',
      fields: [
        { name: 'id', required: true, shape: { kind: 'number' } },
        // A map: its keys are data, so it is an open object.
        { name: 'labels', required: false, shape: { kind: 'object', fields: [], truncated: true } },
        { name: 'name', required: true, shape: { kind: 'string' } },
        { name: 'tag', required: false, shape: { kind: 'oneOf', options: [{ kind: 'string' }, { kind: 'null' }] } },
      ],
    });
  });

  it('documents bodiless and non-JSON responses by presence (a form body by its fields), and skips what has no exact status code, saying so', () => {
    expect(endpoint('DELETE', '/pets/{petId}')?.responses).toEqual([{ status: 204 }]);
    expect(endpoint('PUT', '/pets/{petId}')).toEqual({
      method: 'PUT',
      path: '/pets/{petId}',
      // A form's fields are shaped like JSON (the agent records their names), so its schema is read.
      request: {
        contentType: 'application/x-www-form-urlencoded',
        schema: { type: 'object', properties: { name: { type: 'string' } } },
      },
      responses: [{ status: 200, contentType: 'text/plain' }],
      parameters: { query: [], headers: [] },
    });
    expect(endpoint('GET', '/only-default')).toBeUndefined();
    expect(imported.warnings).toEqual(
      expect.arrayContaining([
        'GET /pets: response "default" skipped (Spectator documents exact status codes)',
        'DELETE /pets/{petId}: response "4XX" skipped (Spectator documents exact status codes)',
        'GET /only-default: skipped, it has no response with an exact status code',
      ]),
    );
  });

  it('cuts a recursive schema where it recurs, and keeps a body it cannot read as its media type alone', () => {
    expect(shapeOf(endpoint('GET', '/tree')?.responses[0]?.schema)).toEqual({
      kind: 'object',
      fields: [
        { name: 'children', required: false, shape: { kind: 'array', items: { kind: 'unknown' } } },
        { name: 'name', required: false, shape: { kind: 'string' } },
      ],
    });
    expect(endpoint('GET', '/odd')?.responses).toEqual([{ status: 200, contentType: 'application/json' }]);
    expect(imported.warnings).toEqual(
      expect.arrayContaining([
        '#/paths/~1tree/get/responses/200/content/application~1json/schema/properties/children/items: recursive $ref "#/components/schemas/Node" documented as any value from here on',
        expect.stringMatching(
          /^GET \/odd: #\/paths\/~1odd\/get\/responses\/200\/content\/application~1json\/schema: documented without a shape: .*not/,
        ),
      ]),
    );
  });

  it('reads query and header parameters: the operation overrides the path item by name and in, $refs resolved, skips reported', () => {
    const withParameters = importOpenApi({
      openapi: '3.1.0',
      info,
      paths: {
        '/orders/{orderId}': {
          parameters: [
            { name: 'orderId', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } },
            { name: 'expand', in: 'query', required: true, schema: { type: 'string' } },
          ],
          get: {
            parameters: [
              { name: 'expand', in: 'query', schema: { type: 'string' } },
              { $ref: '#/components/parameters/Limit' },
              { name: 'Accept', in: 'header', required: true, schema: { type: 'string' } },
              { name: 'session', in: 'cookie', schema: { type: 'string' } },
            ],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
      components: {
        parameters: { Limit: { name: 'limit', in: 'query', required: false, schema: { type: 'integer' } } },
      },
    });
    expect(withParameters.endpoints[0]?.parameters).toEqual({
      query: [
        { name: 'expand', required: false },
        { name: 'limit', required: false },
      ],
      headers: [{ name: 'x-tenant', required: true }],
    });
    expect(withParameters.warnings).toEqual([
      'GET /orders/{orderId}: #/paths/~1orders~1{orderId}/get/parameters/2: header "Accept" skipped (a standard header, not documented)',
      'GET /orders/{orderId}: #/paths/~1orders~1{orderId}/get/parameters/3: cookie parameter "session" skipped (Spectator documents query parameters and request headers)',
    ]);
  });

  it.each([
    [[], 'the body must be an OpenAPI 3 document (a JSON object)'],
    [{ swagger: '2.0', paths: {} }, 'swagger 2.0 documents are not supported; convert to OpenAPI 3 first'],
    [{ openapi: '4.0.0', paths: {} }, 'openapi must be a 3.0.x or 3.1.x version string'],
    [{ openapi: '3.1.0' }, 'paths must be an object of path items'],
    [{ openapi: '3.1.0', info, paths: { pets: {} } }, 'paths: "pets" must start with /'],
    [{ openapi: '3.1.0', info, paths: {} }, 'paths: no operation with a response of an exact status code to import'],
    // Issue 15 item 4: the document is validated against the OpenAPI schema of its version.
    [
      { openapi: '3.1.0', paths: {} },
      "not a valid OpenAPI 3.1 document: the document must have required property 'info'",
    ],
    [
      { openapi: '3.0.3', info, paths: { '/a': { get: { responses: { '200': {} } } } } },
      "not a valid OpenAPI 3.0 document: #/paths/~1a/get/responses/200 must have required property 'description'",
    ],
    [
      {
        openapi: '3.1.0',
        info,
        paths: { '/a': { get: { parameters: [{ in: 'query' }], responses: { '200': { description: 'ok' } } } } },
      },
      'not a valid OpenAPI 3.1 document: #/paths/~1a/get/parameters/0',
    ],
    [
      {
        openapi: '3.1.0',
        info,
        paths: { '/a': { get: { responses: { '200': { $ref: '#/components/responses/Missing' } } } } },
      },
      '#/paths/~1a/get/responses/200: $ref "#/components/responses/Missing" points to nothing in the document',
    ],
  ])('refuses %j: %s', (document, message) => {
    expect(() => importOpenApi(document)).toThrow(DomainError);
    expect(() => importOpenApi(document)).toThrow(message);
  });

  it(`refuses more than ${MAX_IMPORTED_ENDPOINTS} operations in one import`, () => {
    const paths = Object.fromEntries(
      Array.from({ length: MAX_IMPORTED_ENDPOINTS + 1 }, (_, i) => [
        `/r${i}`,
        { get: { responses: { '200': { description: 'ok' } } } },
      ]),
    );
    expect(() => importOpenApi({ openapi: '3.1.0', info, paths })).toThrow(
      `paths: ${MAX_IMPORTED_ENDPOINTS + 1} operations; at most ${MAX_IMPORTED_ENDPOINTS} per import`,
    );
  });

  // Issue 15 item 4: 30 components, each with two properties that $ref the next one (3.4 KB),
  // inline to 2^30 schemas: the backend ran out of heap; depth 18 blocked its event loop 3 s.
  it.each([18, 30])(
    'refuses a $ref chain that doubles at each of %i levels, naming the limit, without expanding it',
    (depth) => {
      const schemas = Object.fromEntries(
        Array.from({ length: depth }, (_, i) => [
          `S${i}`,
          i === depth - 1
            ? { type: 'string' }
            : {
                type: 'object',
                properties: {
                  a: { $ref: `#/components/schemas/S${i + 1}` },
                  b: { $ref: `#/components/schemas/S${i + 1}` },
                },
              },
        ]),
      );
      const document = {
        openapi: '3.1.0',
        info: { title: 'bomb', version: '1' },
        paths: {
          '/x': {
            get: {
              responses: {
                '200': {
                  description: 'ok',
                  content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } },
                },
              },
            },
          },
        },
        components: { schemas },
      };
      expect(JSON.stringify(document).length).toBeLessThan(5_000);
      // The refusal names the count it stopped at: the expansion ends at MAX_SCHEMA_NODES, where
      // a full one takes minutes or the heap (no time bound here: one failed on a loaded CI machine).
      expect(() => importOpenApi(document)).toThrow(DomainError);
      expect(() => importOpenApi(document)).toThrow(
        `#/paths/~1x/get/responses/200/content/application~1json/schema: its schemas, $refs inlined, come to more than ${MAX_SCHEMA_NODES} schema objects per import`,
      );
    },
  );

  it('counts a schema used many times at each use, and accepts a large ordinary document', () => {
    const many = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, { type: 'string' }])),
    };
    const paths = Object.fromEntries(
      Array.from({ length: 200 }, (_, i) => [
        `/r${i}`,
        {
          get: {
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Many' } } },
              },
            },
          },
        },
      ]),
    );
    const imported = importOpenApi({
      openapi: '3.1.0',
      info: { title: 'big', version: '1' },
      paths,
      components: { schemas: { Many: many } },
    });
    expect(imported.endpoints).toHaveLength(200);
  });
});
