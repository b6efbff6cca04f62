/**
 * Bodies that are not plain JSON, end to end: a `multipart/form-data` upload and a server-sent event
 * stream go through the real agent, reach the backend as shapes (an upload's part names with a file
 * part `binary`; a stream's event data), are documented, and export as OpenAPI describes them; an
 * import of the export documents the same body. No value, file name, event name or id is stored.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  DocumentationResponse,
  OpenApiImportResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { eventually, withAgent, type LocalServer } from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

const CANARY = {
  caption: 'CANARYCAPTION5521',
  fileName: 'CANARYFILE7730.png',
  fileBytes: 'CANARYBYTES9904',
  eventName: 'CANARYEVENT3318',
  eventId: 'CANARYID6627',
  eventData: 'CANARYDELTA4471',
};

let backend: TestBackend;
let upstream: LocalServer;

type Content = Record<string, { schema?: unknown }>;
interface Operation {
  requestBody?: { content: Content };
  responses: Record<string, { content?: Content }>;
}
type OpenApi = { paths: Record<string, Record<string, Operation>> };

beforeAll(async () => {
  backend = await startTestBackend();
  for (const slug of ['photos', 'photos-copy', 'chat', 'chat-copy'])
    await backend.api('POST', '/projects', { slug, name: slug });
  // POST /photos takes any body and answers 201 with JSON; GET /chat streams two events and a last `[DONE]`.
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url === '/chat') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const delta = (index: number) =>
          `event: ${CANARY.eventName}\nid: ${CANARY.eventId}\ndata: {"index":${index},"delta":"${CANARY.eventData}"}\n\n`;
        response.end(`${delta(0)}${delta(1)}data: [DONE]\n\n`);
        return;
      }
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

async function upload(proxyUrl: string): Promise<void> {
  const form = new FormData();
  form.append('caption', CANARY.caption);
  form.append('photo', new Blob([CANARY.fileBytes], { type: 'image/png' }), CANARY.fileName);
  const answer = await fetch(`${proxyUrl}/photos`, { method: 'POST', body: form });
  expect(answer.status).toBe(201);
  await answer.arrayBuffer();
}

async function chat(proxyUrl: string): Promise<void> {
  const answer = await fetch(`${proxyUrl}/chat`);
  expect(answer.status).toBe(200);
  await answer.text();
}

describe.each([
  {
    body: 'a multipart upload, its file part as format binary',
    project: 'photos',
    method: 'POST',
    path: '/photos',
    traffic: upload,
    // Of interest (DESIGN.md: JSON bodies): each JSON answer; the uploads are shaped, not counted.
    interest: 2,
    documented: (operation: Operation | undefined) => operation?.requestBody?.content,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          properties: { caption: { type: 'string' }, photo: { type: 'string', format: 'binary' } },
          required: ['caption', 'photo'],
          additionalProperties: false,
        },
      },
    },
  },
  {
    body: 'a server-sent event stream, by the schema of one event’s data',
    project: 'chat',
    method: 'GET',
    path: '/chat',
    traffic: chat,
    // Of interest: nothing (no JSON body), though the streams are shaped.
    interest: 0,
    documented: (operation: Operation | undefined) => operation?.responses['200']?.content,
    content: {
      'text/event-stream': {
        schema: {
          oneOf: [
            { type: 'string' },
            {
              type: 'object',
              properties: { delta: { type: 'string' }, index: { type: 'number' } },
              required: ['delta', 'index'],
              additionalProperties: false,
            },
          ],
        },
      },
    },
  },
])('$body', ({ project, method, path, traffic, interest, documented, content }) => {
  it('is documented from traffic, exported, and imported back the same', async () => {
    const token = (
      await backend.api<TokenResponse>('POST', `/projects/${project}/tokens`, { name: 'agent', scope: 'agent' })
    ).body.token as string;
    const captureId = await withAgent(backend.url, token, upstream.url, { kind: 'local' }, async (proxyUrl) => {
      for (let i = 0; i < 2; i++) await traffic(proxyUrl);
    });
    await eventually(
      async () =>
        (
          await backend.api<UndocumentedEndpointResponse[]>(
            'GET',
            `/projects/${project}/captures/${captureId}/undocumented`,
          )
        ).body,
      (list) =>
        list.some((u) => u.method === method && u.path === path && u.interactions === 2 && u.count === interest),
    );
    const commit = await backend.api<DocumentationResponse>('POST', `/projects/${project}/documentation`, {
      captureId,
      endpoints: [{ method, path, documentBodies: true }],
    });
    expect(commit.status).toBe(201);

    const exported = (await backend.api<OpenApi>('GET', `/projects/${project}/openapi.json`)).body;
    const operation = (openApi: OpenApi) => openApi.paths[path]?.[method.toLowerCase()];
    expect(documented(operation(exported))).toEqual(content);

    const imported = await backend.api<OpenApiImportResponse>(
      'POST',
      `/projects/${project}-copy/openapi/import?approve=true`,
      exported,
    );
    expect(imported.status).toBe(201);
    expect(imported.body.warnings).toEqual([]);
    const reexported = (await backend.api<OpenApi>('GET', `/projects/${project}-copy/openapi.json`)).body;
    expect(documented(operation(reexported))).toEqual(content);
  });
});

it('never stores a part value, a file name, file bytes, event data, an event name or an id', async () => {
  for (const value of Object.values(CANARY))
    expect({ value, tables: await tablesContaining(backend.databaseUrl, value) }).toEqual({ value, tables: [] });
  // The part and field names are stored, so the search does find what is there.
  expect(await tablesContaining(backend.databaseUrl, 'photo')).not.toEqual([]);
  expect(await tablesContaining(backend.databaseUrl, 'delta')).not.toEqual([]);
});
