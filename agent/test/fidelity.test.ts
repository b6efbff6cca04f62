/**
 * Fidelity: what a client reads from the app directly and through the agent, byte for byte, for
 * answers that a proxy easily gets wrong (issue #15, item 9). Raw `net` sockets on both sides: the
 * upstream writes each case's bytes as given, and a raw client reads everything until the
 * connection closes. What a proxy must change is normalised away, and nothing else (docs/agent.md):
 * the HTTP version of the status line (each hop speaks its own), hop-by-hop headers (Connection,
 * Keep-Alive, Transfer-Encoding), a `Date` the upstream did not send (RFC 9110 §6.6.1 has a proxy
 * add one), and header name case and order (names are case-insensitive; values of one name keep
 * their order). Status code, reason phrase, interim (1xx) answers, headers, framing and body bytes
 * must be the same.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestAgent } from './support/agent';
import type { RunningAgent } from '../src/agent';

/** Each case: the exact bytes the upstream writes for `GET /<name>` before it closes the connection. */
const CASES: Record<string, string> = {
  'content-length': 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"id":1234}',
  chunked:
    'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
  'headers over 16 KiB': `HTTP/1.1 200 OK\r\nX-Large: ${'a'.repeat(40 * 1024)}\r\nContent-Length: 2\r\n\r\nok`,
  'many headers over 16 KiB': `HTTP/1.1 200 OK\r\n${Array.from({ length: 400 }, (_, i) => `X-Header-${i}: ${'v'.repeat(60)}\r\n`).join('')}Content-Length: 2\r\n\r\nok`,
  'repeated headers':
    'HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nVary: Accept\r\nSet-Cookie: b=2\r\nVary: Origin\r\nContent-Length: 0\r\n\r\n',
  '204 with Content-Length': 'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n',
  '304 with Content-Length': 'HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 1234\r\n\r\n',
  '103 Early Hints':
    'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
  '102 Processing': 'HTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
  'empty reason phrase': 'HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nok',
  'empty reason phrase, unregistered status': 'HTTP/1.1 299 \r\nContent-Length: 2\r\n\r\nok',
  'own reason phrase': 'HTTP/1.1 200 Very Fine\r\nContent-Length: 2\r\n\r\nok',
  'HTTP/1.0 close-delimited body': 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the connection closes',
  'HTTP/1.1 close-delimited body':
    'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nuntil the connection closes',
  trailers:
    'HTTP/1.1 200 OK\r\nTrailer: X-Checksum\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Checksum: 42\r\n\r\n',
};

/** Answers the agent cannot relay as they are, and what it does instead (docs/agent.md). */
const NOT_RELAYED: Record<string, string> = {
  '101 unasked': 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\n',
  '100 unasked': 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
  '104 interim':
    'HTTP/1.1 104 Upload Resumption Supported\r\nUpload-Draft-Interop-Version: 6\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
};

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection']);

interface Message {
  status: string;
  headers: string[];
}

interface Answer {
  interim: Message[];
  final: Message;
  framing: 'length' | 'chunked' | 'close' | 'none';
  body: string;
  trailers: string[];
  /** Bytes after the end of the message (none expected). */
  rest: string;
}

/** The upstream: a raw server writing each case's bytes after reading the request head, then closing. */
async function rawUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = net.createServer((socket) => {
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const target = decodeURIComponent(/^GET \/(\S*) /.exec(head)?.[1] ?? '');
      socket.end(
        CASES[target] ?? NOT_RELAYED[target] ?? 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n',
        'latin1',
      );
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Every byte a raw client reads, on one connection, for `GET /<name>` of each name (pipelined, the
 * last with `Connection: close`), until the server closes.
 */
function rawGet(url: string, ...names: string[]): Promise<string> {
  return rawRequest(
    url,
    names
      .map(
        (name, i) =>
          `GET /${encodeURIComponent(name)} HTTP/1.1\r\nHost: example.test\r\n${i === names.length - 1 ? 'Connection: close\r\n' : ''}\r\n`,
      )
      .join(''),
  );
}

/** Writes `bytes` on a new connection and reads everything until the server closes it. */
function rawRequest(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.write(bytes);
  });
}

function parseHead(text: string): { message: Message; contentLength: number | null; chunked: boolean; rest: string } {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete head in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers = lines.map((line) => {
    const colon = line.indexOf(':');
    return `${line.slice(0, colon).toLowerCase()}: ${line.slice(colon + 1).trim()}`;
  });
  const value = (name: string): string | undefined =>
    headers.find((h) => h.startsWith(`${name}: `))?.slice(name.length + 2);
  return {
    message: { status: statusLine, headers },
    contentLength: value('content-length') === undefined ? null : Number(value('content-length')),
    chunked: /chunked/i.test(value('transfer-encoding') ?? ''),
    rest: text.slice(end + 4),
  };
}

/** Reads interim answers, the final head, its framing and body, as RFC 9112 §6.3 says. */
function parseAnswer(text: string): Answer {
  const interim: Message[] = [];
  for (;;) {
    const { message, contentLength, chunked, rest } = parseHead(text);
    const code = Number(message.status.split(' ')[1]);
    if (code >= 100 && code < 200 && code !== 101) {
      interim.push(message);
      text = rest;
      continue;
    }
    if (code === 101 || code === 204 || code === 304)
      return { interim, final: message, framing: 'none', body: '', trailers: [], rest };
    if (chunked) {
      let body = '';
      let at = 0;
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', at);
        const size = parseInt(rest.slice(at, lineEnd), 16);
        at = lineEnd + 2;
        if (size === 0) break;
        body += rest.slice(at, at + size);
        at += size + 2;
      }
      const trailerEnd = rest.indexOf('\r\n\r\n', at - 2);
      const trailers = rest
        .slice(at, trailerEnd)
        .split('\r\n')
        .filter(Boolean)
        .map((line) => line.toLowerCase());
      return { interim, final: message, framing: 'chunked', body, trailers, rest: rest.slice(trailerEnd + 4) };
    }
    if (contentLength !== null)
      return {
        interim,
        final: message,
        framing: 'length',
        body: rest.slice(0, contentLength),
        trailers: [],
        rest: rest.slice(contentLength),
      };
    return { interim, final: message, framing: 'close', body: rest, trailers: [], rest: '' };
  }
}

/** What a proxy may not change: everything but the version, hop-by-hop headers, an added Date, and name case and order. */
function normalise(answer: Answer, upstreamSentDate: boolean): Answer {
  const message = (m: Message): Message => ({
    status: m.status.replace(/^HTTP\/1\.[01] /, ''),
    headers: m.headers
      .filter((h) => !HOP_BY_HOP.has(h.slice(0, h.indexOf(':'))) && (upstreamSentDate || !h.startsWith('date: ')))
      .sort(),
  });
  return { ...answer, interim: answer.interim.map(message), final: message(answer.final) };
}

describe('fidelity: the bytes a client reads directly and through the agent', () => {
  let upstream: Awaited<ReturnType<typeof rawUpstream>>;
  let agent: RunningAgent;
  beforeAll(async () => {
    upstream = await rawUpstream();
    agent = await startTestAgent({ upstream: upstream.url });
  });
  afterAll(async () => {
    await agent?.close();
    await upstream?.close();
  });

  it.each(Object.keys(CASES))('%s', async (name) => {
    const direct = await rawGet(upstream.url, name);
    const proxied = await rawGet(agent.proxyUrl, name);
    const upstreamSentDate = /\r\ndate:/i.test(direct.slice(0, direct.indexOf('\r\n\r\n')));
    expect(normalise(parseAnswer(proxied), upstreamSentDate)).toEqual(normalise(parseAnswer(direct), upstreamSentDate));
  });

  it('passes a request head over 16 KiB on to the app, and answers one over 256 KiB with 431', async () => {
    const request = `GET /content-length HTTP/1.1\r\nHost: example.test\r\nX-Large: ${'a'.repeat(40 * 1024)}\r\nConnection: close\r\n\r\n`;
    expect(parseAnswer(await rawRequest(agent.proxyUrl, request))).toMatchObject({
      final: { status: 'HTTP/1.1 200 OK' },
      body: '{"id":1234}',
    });
    // An unfinished head just over the bound: the agent reads all of it, so it closes with nothing unread.
    const overflow = `GET /content-length HTTP/1.1\r\nHost: example.test\r\nX-Large: ${'a'.repeat(256 * 1024)}`;
    expect(parseAnswer(await rawRequest(agent.proxyUrl, overflow)).final.status).toBe(
      'HTTP/1.1 431 Request Header Fields Too Large',
    );
  });

  it('keeps the client connection usable after a 204 or 304 with a Content-Length', async () => {
    const answers = await rawGet(
      agent.proxyUrl,
      '204 with Content-Length',
      '304 with Content-Length',
      'content-length',
    );
    const first = parseAnswer(answers);
    const second = parseAnswer(first.rest);
    const third = parseAnswer(second.rest);
    expect([first, second, third].map((answer) => answer.final.status)).toEqual([
      'HTTP/1.1 204 No Content',
      'HTTP/1.1 304 Not Modified',
      'HTTP/1.1 200 OK',
    ]);
    expect(third).toMatchObject({ body: '{"id":1234}', rest: '' });
  });

  it('sends no interim answer to an HTTP/1.0 client', async () => {
    const answer = await rawRequest(
      agent.proxyUrl,
      `GET /${encodeURIComponent('103 Early Hints')} HTTP/1.0\r\nHost: example.test\r\n\r\n`,
    );
    expect(parseAnswer(answer)).toMatchObject({ interim: [], final: { status: 'HTTP/1.1 200 OK' }, body: 'ok' });
  });

  it('answers an unasked 101 or 100 with 502, and drops interim answers other than 102 and 103, as documented', async () => {
    const through = async (name: string): Promise<Answer> => parseAnswer(await rawGet(agent.proxyUrl, name));
    expect(parseAnswer(await rawGet(upstream.url, '101 unasked')).final.status).toBe(
      'HTTP/1.1 101 Switching Protocols',
    );
    expect((await through('101 unasked')).final.status).toBe('HTTP/1.1 502 Bad Gateway');
    expect(parseAnswer(await rawGet(upstream.url, '100 unasked')).interim).toHaveLength(1);
    expect((await through('100 unasked')).final.status).toBe('HTTP/1.1 502 Bad Gateway');
    expect(parseAnswer(await rawGet(upstream.url, '104 interim')).interim).toHaveLength(1);
    expect(await through('104 interim')).toMatchObject({
      interim: [],
      final: { status: 'HTTP/1.1 200 OK' },
      body: 'ok',
    });
  });
});
