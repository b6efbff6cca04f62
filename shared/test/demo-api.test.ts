/// <reference types="node" />
// The demo posts API (deploy/demo-api), started on port 0 and exercised with real HTTP requests.
// It lives with the shared tests because the deploy folder has no test project of its own here.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseOptions, startDemoApi, MAX_BODY_BYTES } from '../../deploy/demo-api/server';
import { isIgnored, parseServiceConfig } from '../src/ignore/rules';

type DemoApi = Awaited<ReturnType<typeof startDemoApi>>;

let api: DemoApi;
beforeEach(async () => {
  api = await startDemoApi();
});
afterEach(async () => {
  await api.close();
});

async function messageOf(response: Response): Promise<string> {
  return ((await response.json()) as { message: string }).message;
}

function postJson(path: string, body: unknown, contentType = 'application/json'): Promise<Response> {
  return fetch(api.url + path, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: JSON.stringify(body),
  });
}

describe('POST /posts', () => {
  it('creates a post: 201 with the record and a server-assigned, incremented numeric id', async () => {
    const first = await postJson('/posts', { title: 'Hello', author: 'Ada' });
    expect(first.status).toBe(201);
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(first.headers.get('location')).toBe('/posts/1');
    expect(await first.json()).toEqual({ id: 1, title: 'Hello', author: 'Ada' });

    const second = await postJson('/posts', { title: 'Again', author: 'Grace', id: 99 }); // a client id is not used
    expect(second.status).toBe(201);
    expect(await second.json()).toEqual({ id: 2, title: 'Again', author: 'Grace' });
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/vnd.demo+json'])(
    'accepts Content-Type %s',
    async (contentType) => {
      const response = await postJson('/posts', { title: 't', author: 'a' }, contentType);
      expect(response.status).toBe(201);
    },
  );

  it.each([
    ['text/plain', 'got Content-Type "text/plain"'],
    ['application/x-www-form-urlencoded', 'got Content-Type "application/x-www-form-urlencoded"'],
    ['application/jsonx', 'got Content-Type "application/jsonx"'],
  ])('answers Content-Type %s with 415 and a clear JSON message', async (contentType, detail) => {
    const response = await postJson('/posts', { title: 't', author: 'a' }, contentType);
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      statusCode: 415,
      error: 'Unsupported Media Type',
      message: `the request body must be JSON, sent with Content-Type: application/json (${detail})`,
    });
  });

  it('answers a body without Content-Type with 415', async () => {
    const response = await fetch(`${api.url}/posts`, {
      method: 'POST',
      body: new TextEncoder().encode('{"title":"t","author":"a"}'),
    });
    expect(response.status).toBe(415);
    expect(await messageOf(response)).toContain('got no Content-Type header');
  });

  it.each<[unknown, string]>([
    [{ author: 'Ada' }, '"title" is required (a string)'],
    [{ title: 'Hello' }, '"author" is required (a string)'],
    [{}, '"title" is required (a string); "author" is required (a string)'],
    [{ title: 42, author: 'Ada' }, '"title" must be a string, got number'],
    [{ title: 'Hello', author: ['Ada'] }, '"author" must be a string, got array'],
    [{ title: 'Hello', author: null }, '"author" is required (a string)'],
    [{ title: ' ', author: 'Ada' }, '"title" must not be empty'],
    [
      ['Hello', 'Ada'],
      'the request body (a JSON object with "title" and "author") must be a JSON object, got an array',
    ],
    ['Hello', 'the request body (a JSON object with "title" and "author") must be a JSON object, got string'],
  ])('answers %j with 400 naming the field', async (body, message) => {
    const response = await postJson('/posts', body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ statusCode: 400, error: 'Bad Request', message });
  });

  it.each([
    ['{"title": "Hello",', 'the request body is not valid JSON: '],
    ['', 'the request body is empty; send a JSON object'],
  ])('answers the body %j with 400', async (text, message) => {
    const response = await fetch(`${api.url}/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    expect(response.status).toBe(400);
    expect(await messageOf(response)).toContain(message);
  });

  it('answers a body over the limit with 413', async () => {
    const response = await postJson('/posts', { title: 'x'.repeat(MAX_BODY_BYTES), author: 'Ada' });
    expect(response.status).toBe(413);
    expect(await messageOf(response)).toBe(`the request body is larger than ${MAX_BODY_BYTES} bytes`);
  });

  it('does not create a post from a bad request', async () => {
    await postJson('/posts', { title: 'no author' });
    await postJson('/posts', { title: 'Hello', author: 'Ada' }, 'text/plain');
    expect(await (await fetch(`${api.url}/posts`)).json()).toEqual([]);
  });
});

describe('GET /posts and GET /posts/:id', () => {
  it('lists the posts in creation order', async () => {
    expect(await (await fetch(`${api.url}/posts`)).json()).toEqual([]);
    await postJson('/posts', { title: 'One', author: 'Ada' });
    await postJson('/posts', { title: 'Two', author: 'Grace' });
    const response = await fetch(`${api.url}/posts/`); // a trailing slash is the same path
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { id: 1, title: 'One', author: 'Ada' },
      { id: 2, title: 'Two', author: 'Grace' },
    ]);
  });

  it('gets one post by id, and 404 for an absent one', async () => {
    await postJson('/posts', { title: 'One', author: 'Ada' });
    const found = await fetch(`${api.url}/posts/1`);
    expect(found.status).toBe(200);
    expect(await found.json()).toEqual({ id: 1, title: 'One', author: 'Ada' });

    const absent = await fetch(`${api.url}/posts/2`);
    expect(absent.status).toBe(404);
    expect(await absent.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'post 2 not found' });
  });

  it.each(['abc', '0', '-1', '1.5', '01'])('answers the id %s with 400', async (id) => {
    const response = await fetch(`${api.url}/posts/${id}`);
    expect(response.status).toBe(400);
    expect(await messageOf(response)).toBe(`post id must be a positive integer, got "${id}"`);
  });

  it('keeps the posts of each server apart', async () => {
    await postJson('/posts', { title: 'One', author: 'Ada' });
    const other = await startDemoApi();
    try {
      expect(await (await fetch(`${other.url}/posts`)).json()).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

describe('other routes', () => {
  it.each([
    ['DELETE', '/posts', 'GET, POST'],
    ['PUT', '/posts/1', 'GET'],
    ['DELETE', '/db', 'GET, POST, PUT'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const response = await fetch(api.url + path, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(await messageOf(response)).toBe(`${method} is not allowed on ${path}; allowed: ${allow}`);
  });

  it('answers an unknown path with 404', async () => {
    const response = await fetch(`${api.url}/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'no route for GET /nope' });
  });
});

describe('the landing page', () => {
  it('loads /script.js, /style.css and /favicon.ico, and the script uses /db with GET, POST and PUT', async () => {
    const page = await fetch(`${api.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<script src="/script.js">');
    expect(html).toContain('<link rel="stylesheet" href="/style.css" />');
    expect(html).toContain('<link rel="icon" href="/favicon.ico" />');

    const assets: Array<[string, string]> = [
      ['/script.js', 'text/javascript; charset=utf-8'],
      ['/style.css', 'text/css; charset=utf-8'],
      ['/favicon.ico', 'image/x-icon'],
    ];
    for (const [path, contentType] of assets) {
      const response = await fetch(api.url + path);
      expect([path, response.status, response.headers.get('content-type')]).toEqual([path, 200, contentType]);
    }
    const icon = new Uint8Array(await (await fetch(`${api.url}/favicon.ico`)).arrayBuffer());
    expect([...icon.slice(0, 4)]).toEqual([0, 0, 1, 0]); // ICO header: reserved 0, type 1 (icon)

    const script = await (await fetch(`${api.url}/script.js`)).text();
    expect(script).toContain("fetch('/db')");
    expect(script).toContain("fetch('/db', { method: 'POST'");
    expect(script).toContain("fetch('/db', { method: 'PUT'");
  });

  it('keeps the /db document: GET, POST (a visit event) and PUT (replace)', async () => {
    expect(await (await fetch(`${api.url}/db`)).json()).toEqual({ visits: 0 });
    const posted = await postJson('/db', { event: 'visit' });
    expect(posted.status).toBe(200);
    const put = await fetch(`${api.url}/db`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"visits":1}',
    });
    expect(await put.json()).toEqual({ visits: 1 });
    expect(await (await fetch(`${api.url}/db`)).json()).toEqual({ visits: 1 });
    const bad = await fetch(`${api.url}/db`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '[1]',
    });
    expect(bad.status).toBe(400);
  });

  it('is exactly the traffic deploy/service.yml ignores, and the posts API is not', async () => {
    const { rules, errors } = parseServiceConfig(readFileSync(join(__dirname, '../../deploy/service.yml'), 'utf8'));
    expect(errors).toEqual([]);
    expect(rules.map((r) => r.source)).toEqual([
      'GET /',
      'GET POST PUT /db',
      'GET /favicon.ico',
      'GET /script.js',
      'GET /style.css',
      'OPTIONS (.*)',
    ]);
    const landing = [
      'GET /',
      'GET /script.js',
      'GET /style.css',
      'GET /favicon.ico',
      'GET /db',
      'POST /db',
      'PUT /db',
      'OPTIONS /posts',
    ];
    const api = ['POST /posts', 'GET /posts', 'GET /posts/1'];
    const ignored = (request: string) => isIgnored(rules, request.split(' ')[0]!, request.split(' ')[1]!);
    expect(landing.filter((r) => !ignored(r))).toEqual([]);
    expect(api.filter(ignored)).toEqual([]);
  });
});

describe('options', () => {
  it.each<[string[], Record<string, string>, { port: number; host: string }]>([
    [[], {}, { port: 3000, host: '127.0.0.1' }],
    [[], { PORT: '8080' }, { port: 8080, host: '127.0.0.1' }],
    [['--port', '9000'], { PORT: '8080' }, { port: 9000, host: '127.0.0.1' }],
    [['--port=0', '--host=0.0.0.0'], {}, { port: 0, host: '0.0.0.0' }],
    [[], { HOST: '::1', PORT: '1' }, { port: 1, host: '::1' }],
  ])('%j with %j → %j', (argv, env, expected) => {
    expect(parseOptions(argv, env)).toEqual(expected);
  });

  it.each<[string[], Record<string, string>, string]>([
    [['--port', 'abc'], {}, 'port must be an integer from 0 to 65535, got "abc" (from --port)'],
    [[], { PORT: '70000' }, 'port must be an integer from 0 to 65535, got "70000" (from PORT)'],
    [['--port'], {}, '--port needs a value'],
    [['--verbose'], {}, 'unknown argument "--verbose"; usage: server.js [--port N] [--host H]'],
  ])('%j with %j fails: %s', (argv, env, message) => {
    expect(() => parseOptions(argv, env)).toThrow(message);
  });
});

describe('the command line', () => {
  const script = join(__dirname, '../../deploy/demo-api/server.js');

  /** Run server.js; resolves once it printed its first line, with that line, the process and its exit. */
  async function run(args: string[], env: Record<string, string> = {}) {
    const child = spawn(process.execPath, [script, ...args], {
      env: { ...process.env, PORT: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit').then(([code]) => code as number | null);
    let output = '';
    const firstLine = new Promise<string>((resolve) => {
      const collect = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('\n')) resolve(output.split('\n', 1)[0]!);
      };
      child.stdout.on('data', collect);
      child.stderr.on('data', collect);
    });
    return { child, exited, line: await firstLine };
  }

  it('listens on --port (0 picks a free one), serves, and stops cleanly on SIGTERM', async () => {
    const { child, exited, line } = await run(['--port', '0']);
    const url = /^demo posts API listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line)?.[1];
    expect(url).toBeDefined();
    expect((await fetch(`${url}/posts`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('says which port is in use and how to choose another', async () => {
    const { exited, line } = await run([], { PORT: String(api.port) });
    expect(line).toBe(
      `demo-api: cannot listen on 127.0.0.1:${api.port}: port ${api.port} is in use; choose another with --port or PORT`,
    );
    expect(await exited).toBe(1);
  });

  it('refuses a bad port with exit code 2', async () => {
    const { exited, line } = await run(['--port=http']);
    expect(line).toBe('demo-api: port must be an integer from 0 to 65535, got "http" (from --port)');
    expect(await exited).toBe(2);
  });
});
