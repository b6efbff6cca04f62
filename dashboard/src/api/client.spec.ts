import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, createApiClient } from './client';

/** A real HTTP server on port 0 that records requests and answers from a table. */
async function startServer(answer: (req: IncomingMessage, body: string) => { status: number; body?: string }) {
  const seen: Array<{ method: string; url: string; auth: string | undefined; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
      const reply = answer(req, body);
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('createApiClient', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  afterEach(() => server.close());

  it('sends the bearer token to /api/v1 paths, escaping path parts and query', async () => {
    server = await startServer(() => ({
      status: 200,
      body: JSON.stringify({
        method: 'POST',
        path: '/posts',
        interactions: 2,
        request: null,
        responses: [],
        query: [],
        requestHeaders: [],
      }),
    }));
    const api = createApiClient({ baseUrl: server.baseUrl, token: 'sp_secret' });
    const observed = await api.observed('my proj', 'c/1', 'POST', '/posts/{postId}');
    expect(observed.interactions).toBe(2);
    expect(server.seen).toEqual([
      {
        method: 'GET',
        url: '/api/v1/projects/my%20proj/captures/c%2F1/observed?method=POST&path=%2Fposts%2F%7BpostId%7D',
        auth: 'Bearer sp_secret',
        body: '',
      },
    ]);
  });

  it('posts JSON bodies', async () => {
    server = await startServer(() => ({ status: 201, body: JSON.stringify({ proposalId: 'p1', versions: [] }) }));
    const api = createApiClient({ baseUrl: server.baseUrl, token: 't' });
    await expect(
      api.commitDocumentation('demo', {
        captureId: 'c1',
        endpoints: [{ method: 'POST', path: '/posts', description: 'd', documentBodies: true }],
      }),
    ).resolves.toEqual({ proposalId: 'p1', versions: [] });
    expect(JSON.parse(server.seen[0]!.body)).toEqual({
      captureId: 'c1',
      endpoints: [{ method: 'POST', path: '/posts', description: 'd', documentBodies: true }],
    });
  });

  it('rejects with the backend message, joining validation messages', async () => {
    server = await startServer(() => ({
      status: 400,
      body: JSON.stringify({
        statusCode: 400,
        error: 'Bad Request',
        message: ['endpoints.0.method must be a string', 'captureId should not be empty'],
      }),
    }));
    const api = createApiClient({ baseUrl: server.baseUrl, token: 't' });
    const error = await api.captures('demo').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      message: 'endpoints.0.method must be a string; captureId should not be empty',
      path: '/projects/demo/captures',
    });
  });

  it('says to sign in again on 401 without a body', async () => {
    server = await startServer(() => ({ status: 401 }));
    const error = (await createApiClient({ baseUrl: server.baseUrl, token: 'bad' })
      .projects()
      .catch((e: unknown) => e)) as ApiError;
    expect(error.unauthorized).toBe(true);
    expect(error.message).toBe('Your token was not accepted. Sign in again.');
  });

  it('names a success answer that is not JSON', async () => {
    server = await startServer(() => ({ status: 200, body: '<html>' }));
    await expect(createApiClient({ baseUrl: server.baseUrl, token: 't' }).endpoints('demo')).rejects.toThrow(
      'The backend answered /projects/demo/endpoints with something that is not JSON.',
    );
  });

  it('turns an unreachable backend into status 0 with a readable message', async () => {
    server = await startServer(() => ({ status: 200 }));
    const baseUrl = server.baseUrl;
    await server.close();
    server = await startServer(() => ({ status: 200 })); // closed again in afterEach
    const error = (await createApiClient({ baseUrl, token: 't' })
      .projects()
      .catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(0);
    expect(error.message).toMatch(/Cannot reach the Spectator backend/);
  });
});
