/**
 * Uploads end to end: a `multipart/form-data` request through the real agent reaches the backend as
 * a shape of its part names (a file part `binary`, never a value or file name), is documented, and
 * exports as OpenAPI describes uploads; an import of the export documents the same body.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DocumentationResponse, OpenApiImportResponse, TokenResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { eventually, withAgent, type LocalServer } from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

const CANARY = { caption: 'CANARYCAPTION5521', fileName: 'CANARYFILE7730.png', fileBytes: 'CANARYBYTES9904' };

let backend: TestBackend;
let upstream: LocalServer;

interface Operation {
  requestBody?: { content: Record<string, { schema?: unknown }> };
}
type OpenApi = { paths: Record<string, Record<string, Operation>> };

beforeAll(async () => {
  backend = await startTestBackend();
  for (const slug of ['photos', 'copy']) await backend.api('POST', '/projects', { slug, name: slug });
  // Takes any body, answers 201 with JSON.
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end('{"id":7}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});
afterAll(async () => {
  await upstream?.close();
  await backend?.close();
});

describe('multipart uploads', () => {
  it('are documented from traffic and exported with their file part as format binary', async () => {
    const token = (await backend.api<TokenResponse>('POST', '/projects/photos/tokens', { name: 'agent', scope: 'agent' })).body.token as string;
    const captureId = await withAgent(backend.url, token, upstream.url, { kind: 'local' }, async (proxyUrl) => {
      for (let i = 0; i < 2; i++) {
        const form = new FormData();
        form.append('caption', CANARY.caption);
        form.append('photo', new Blob([CANARY.fileBytes], { type: 'image/png' }), CANARY.fileName);
        const answer = await fetch(`${proxyUrl}/photos`, { method: 'POST', body: form });
        expect(answer.status).toBe(201);
        await answer.arrayBuffer();
      }
    });
    await eventually(
      async () => (await backend.api<UndocumentedEndpointResponse[]>('GET', `/projects/photos/captures/${captureId}/undocumented`)).body,
      (list) => list.some((u) => u.method === 'POST' && u.path === '/photos' && u.interactions === 2),
    );
    const commit = await backend.api<DocumentationResponse>('POST', '/projects/photos/documentation', { captureId, endpoints: [{ method: 'POST', path: '/photos', documentBodies: true }] });
    expect(commit.status).toBe(201);

    const exported = (await backend.api<OpenApi>('GET', '/projects/photos/openapi.json')).body;
    const requestBody = exported.paths['/photos']?.post?.requestBody;
    expect(requestBody?.content).toEqual({
      'multipart/form-data': {
        schema: {
          type: 'object',
          properties: { caption: { type: 'string' }, photo: { type: 'string', format: 'binary' } },
          required: ['caption', 'photo'],
          additionalProperties: false,
        },
      },
    });

    const imported = await backend.api<OpenApiImportResponse>('POST', '/projects/copy/openapi/import?approve=true', exported);
    expect(imported.status).toBe(201);
    expect(imported.body.warnings).toEqual([]);
    const reexported = (await backend.api<OpenApi>('GET', '/projects/copy/openapi.json')).body;
    expect(reexported.paths['/photos']?.post?.requestBody).toEqual(requestBody);
  });

  it('never stores a part value, a file name or file bytes', async () => {
    for (const value of Object.values(CANARY)) expect({ value, tables: await tablesContaining(backend.databaseUrl, value) }).toEqual({ value, tables: [] });
    // The part names are stored, so the search does find what is there.
    expect(await tablesContaining(backend.databaseUrl, 'photo')).not.toEqual([]);
  });
});
