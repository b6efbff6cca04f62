/** Importing an OpenAPI document as documentation: a proposal of planned shapes, approved or left for review. */
import type {
  CaptureResponse,
  DiffResponse,
  EndpointResponse,
  OpenApiImportResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import { apiCall, startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';

const users = {
  openapi: '3.1.0',
  info: { title: 'Users', version: '1.4.0' },
  paths: {
    '/users': {
      post: {
        summary: 'Create a user',
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/NewUser' } } } },
        responses: {
          '201': {
            description: 'created',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } },
          },
          default: { description: 'error' },
        },
      },
    },
    '/users/{userId}': {
      parameters: [
        { name: 'userId', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'X-Tenant', in: 'header', required: false, schema: { type: 'string' } },
      ],
      get: {
        parameters: [{ name: 'fields', in: 'query', schema: { type: 'string' } }],
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/User' } } },
          },
          '404': { description: 'none' },
        },
      },
      delete: { responses: { '204': { description: 'gone' } } },
    },
  },
  components: {
    schemas: {
      NewUser: {
        type: 'object',
        required: ['email'],
        properties: { email: { type: 'string', format: 'email' }, name: { type: ['string', 'null'] } },
      },
      User: {
        allOf: [
          { $ref: '#/components/schemas/NewUser' },
          { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
        ],
      },
    },
  },
};

let backend: TestBackend;
const tokens = { agent: '', read: '', write: '' };

beforeAll(async () => {
  backend = await startTestBackend();
  for (const slug of ['acme', 'copy']) await backend.api('POST', '/projects', { slug, name: slug });
  for (const scope of ['agent', 'read', 'write'] as const)
    tokens[scope] = (
      await backend.api<TokenResponse>('POST', '/projects/acme/tokens', { name: `${scope} token`, scope })
    ).body.token as string;
});
afterAll(async () => {
  await backend.close();
});

const endpointsOf = async (project: string) =>
  (await backend.api<EndpointResponse[]>('GET', `/projects/${project}/endpoints`)).body;
/** What an endpoint documents, without ids and times (to compare two projects). */
const documented = (list: EndpointResponse[]) =>
  list.map(({ method, path, description, version, request, responses, parameters }) => ({
    method,
    path,
    description,
    version,
    request,
    responses,
    parameters,
  }));

describe('POST /projects/{p}/openapi/import', () => {
  it('needs a write token and answers a bad document with 400 naming what is wrong', async () => {
    expect((await apiCall(backend.url, tokens.read, 'POST', '/projects/acme/openapi/import', users)).status).toBe(403);
    expect(await backend.api('POST', '/projects/acme/openapi/import', { swagger: '2.0' })).toEqual({
      status: 400,
      body: {
        statusCode: 400,
        error: 'Bad Request',
        message: 'swagger 2.0 documents are not supported; convert to OpenAPI 3 first',
      },
    });
    expect((await backend.api('POST', '/projects/acme/openapi/import?approve=yes', users)).status).toBe(400);
    expect(await endpointsOf('acme')).toEqual([]);
  });

  it('makes an open proposal by default, naming what it simplified', async () => {
    const answer = await apiCall<OpenApiImportResponse>(
      backend.url,
      tokens.write,
      'POST',
      '/projects/acme/openapi/import',
      users,
    );
    expect(answer.status).toBe(201);
    expect(answer.body.proposal).toMatchObject({
      title: 'Import Users 1.4.0 from OpenAPI',
      status: 'Open',
      createdBy: 'write token',
    });
    expect(answer.body.proposal.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
      'POST /users',
      'GET /users/{userId}',
      'DELETE /users/{userId}',
    ]);
    expect(answer.body.warnings).toEqual([
      'POST /users: response "default" skipped (Spectator documents exact status codes)',
    ]);
    expect(await endpointsOf('acme')).toEqual([]);
  });

  it('with approve=true documents every operation as 1.0, and traffic that matches shows no diff and nothing undocumented', async () => {
    const answer = await apiCall<OpenApiImportResponse>(
      backend.url,
      tokens.write,
      'POST',
      '/projects/acme/openapi/import?approve=true',
      users,
    );
    expect(answer.body.proposal.status).toBe('Approved');
    const list = await endpointsOf('acme');
    expect(list.map((e) => `${e.method} ${e.path} ${e.version}`)).toEqual([
      'POST /users 1.0',
      'DELETE /users/{userId} 1.0',
      'GET /users/{userId} 1.0',
    ]);
    const post = list.find((e) => e.method === 'POST');
    expect(post).toMatchObject({
      description: 'Create a user',
      request: { contentType: 'application/json' },
      responses: [{ status: 201, contentType: 'application/json' }],
    });
    expect(list.find((e) => e.method === 'DELETE')?.responses).toEqual([{ status: 204, contentType: '', shape: null }]);
    // Path-item parameters apply to every operation of the path; path parameters are the template's.
    expect(list.find((e) => e.method === 'GET')?.parameters).toEqual({
      query: [{ name: 'fields', required: false }],
      headers: [{ name: 'x-tenant', required: false }],
    });
    expect(list.find((e) => e.method === 'DELETE')?.parameters).toEqual({
      query: [],
      headers: [{ name: 'x-tenant', required: false }],
    });

    const agent = await connectTestAgent(backend.url, tokens.agent);
    const hello = helloMessage({ environment: { kind: 'ci', pullRequest: '7' } });
    await agent.request(hello);
    const user = { id: 1, email: 'a@b.example', name: null };
    expect(
      await agent.request(
        batchMessage(hello.capture.id, [
          {
            method: 'POST',
            path: '/users',
            status: 201,
            request: { email: 'a@b.example', name: 'Ann' },
            response: user,
          },
          { method: 'GET', path: '/users/{userId}', status: 200, response: { ...user, name: 'Ann' } },
          { method: 'DELETE', path: '/users/{userId}', status: 204 },
        ]),
      ),
    ).toMatchObject({ type: 'ack' });
    const base = `/projects/acme/captures/${hello.capture.id}`;
    expect((await backend.api<UndocumentedEndpointResponse[]>('GET', `${base}/undocumented`)).body).toEqual([]);
    expect((await backend.api<DiffResponse[]>('GET', `${base}/diffs`)).body).toEqual([]);

    // A field the document does not have is a diff against the imported version.
    expect(
      await agent.request(
        batchMessage(hello.capture.id, [
          { method: 'GET', path: '/users/{userId}', status: 200, response: { ...user, admin: true } },
        ]),
      ),
    ).toMatchObject({ type: 'ack' });
    const diffs = (await backend.api<DiffResponse[]>('GET', `${base}/diffs`)).body;
    expect(diffs.map((d) => `${d.method} ${d.path} ${d.version}`)).toEqual(['GET /users/{userId} 1.0']);
    await agent.close();
    expect((await backend.api<CaptureResponse>('GET', base)).body).toMatchObject({ undocumented: 0, diffs: 1 });
  });

  it('reads YAML (application/yaml) and names the line of a YAML mistake', async () => {
    const yaml = [
      'openapi: 3.0.3',
      'info: { title: Health, version: "1" }',
      'paths:',
      '  /health:',
      '    get:',
      '      summary: Is it up',
      '      responses:',
      "        '200':",
      '          description: up',
      '          content:',
      '            application/json:',
      '              schema: { type: object, properties: { status: { type: string } } }',
      '',
    ].join('\n');
    const post = (body: string) =>
      fetch(`${backend.url}/api/v1/projects/copy/openapi/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${backend.adminToken}`, 'content-type': 'application/yaml' },
        body,
      });
    const answer = await post(yaml);
    expect(answer.status).toBe(201);
    expect(
      ((await answer.json()) as OpenApiImportResponse).proposal.endpoints.map((e) => `${e.method} ${e.path}`),
    ).toEqual(['GET /health']);
    const broken = await post('openapi: 3.0.3\npaths:\n  /a: [unclosed\n');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { message: string }).message).toMatch(/^body is not valid YAML \(line \d+\): /);
  });

  it('round-trips: the OpenAPI export of a project imported into another documents the same endpoints', async () => {
    const exported = (await backend.api<Record<string, unknown>>('GET', '/projects/acme/openapi.json')).body;
    const answer = await backend.api<OpenApiImportResponse>(
      'POST',
      '/projects/copy/openapi/import?approve=true',
      exported,
    );
    expect(answer.status).toBe(201);
    expect(answer.body.warnings).toEqual([]);
    expect(documented(await endpointsOf('copy'))).toEqual(documented(await endpointsOf('acme')));
  });
});
