import { startAgent } from '@spectator/agent';
import type { AgentEnvironment, ProposalResponse } from '@spectator/shared';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { verifySignature } from '../../src/webhooks/signature';
import { batchMessage, connectTestAgent, helloMessage, type TestExchange } from './agent-client';
import { databaseUrlOf, sqlOn, type TestBackend } from './index';

/**
 * Polls `read` until `ok` holds (every 100 ms, up to `timeoutMs`); throws with the last value. A value
 * `ok` cannot read yet (it throws, e.g. an error body where a list is expected because the backend has
 * not yet stored the capture the agent announced) counts as not reached.
 */
export async function eventually<T>(
  read: () => Promise<T> | T,
  ok: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (reached(ok, value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in time; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until no batch's evidence is left queued in the database: a staging or production batch is
 * acknowledged at its commit, before its fold, and the fold that takes a batch deletes it from the
 * queue in the transaction that writes its evidence.
 */
export async function untilFolded(databaseUrl: string): Promise<void> {
  await eventually(
    () => sqlOn<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM evidence_queue'),
    ([row]) => row?.n === 0,
  );
}

/** The captures whose count of endpoints (`capture_endpoint_counts`, summed over slots) is not their number of summaries. */
export function endpointCountsDiffering(databaseUrl: string): Promise<unknown[]> {
  return sqlOn(
    databaseUrl,
    `SELECT c.id, coalesce(n.endpoints, 0) AS counted, coalesce(s.summaries, 0) AS summaries
       FROM captures c
       LEFT JOIN (SELECT capture_id, sum(endpoints)::int AS endpoints FROM capture_endpoint_counts GROUP BY capture_id) n ON n.capture_id = c.id
       LEFT JOIN (SELECT capture_id, count(*)::int AS summaries FROM capture_endpoints GROUP BY capture_id) s ON s.capture_id = c.id
      WHERE coalesce(n.endpoints, 0) <> coalesce(s.summaries, 0)`,
  );
}

function reached<T>(ok: (value: T) => boolean, value: T): boolean {
  try {
    return ok(value);
  } catch {
    return false;
  }
}

/** A started HTTP server on 127.0.0.1:0. */
export interface LocalServer {
  url: string;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<LocalServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A JSON app answering each `METHOD /path` with the routed function's result. */
export function startJsonApp(
  routes: Record<string, (body: unknown) => { status: number; body: unknown; headers?: Record<string, string> }>,
): Promise<LocalServer> {
  return listen(
    createServer((request, response) => {
      void readBody(request).then((text) => {
        const route = `${request.method} ${(request.url ?? '/').split('?')[0]}`;
        const handler = routes[route];
        const result = handler
          ? handler(text === '' ? undefined : JSON.parse(text))
          : { status: 404, body: { error: 'not found' }, headers: {} };
        response.writeHead(result.status, { 'content-type': 'application/json', ...result.headers });
        response.end(JSON.stringify(result.body));
      });
    }),
  );
}

/** One webhook request as received. */
export interface ReceivedHook {
  body: string;
  signature: string | undefined;
  event: string | undefined;
  delivery: string | undefined;
  valid: boolean;
}

/**
 * A webhook receiver that checks signatures with `secret`; the first `failFirst` requests (and as
 * many more as `failNext` asks for later) are answered 500 and not recorded.
 */
export async function startHookReceiver(
  secret: string,
  failFirst = 0,
): Promise<LocalServer & { received: ReceivedHook[]; failNext(count: number): void; attempts(): number }> {
  const received: ReceivedHook[] = [];
  let failures = failFirst;
  let attempts = 0;
  const server = await listen(
    createServer((request, response) => {
      void readBody(request).then((body) => {
        const signature = request.headers['x-spectator-signature'] as string | undefined;
        attempts++;
        if (failures > 0) {
          failures--;
          response.writeHead(500).end();
          return;
        }
        received.push({
          body,
          signature,
          event: request.headers['x-spectator-event'] as string | undefined,
          delivery: request.headers['x-spectator-delivery'] as string | undefined,
          valid: verifySignature(secret, body, signature),
        });
        response.writeHead(204).end();
      });
    }),
  );
  return { ...server, received, failNext: (count) => (failures = count), attempts: () => attempts };
}

/** The whole body of a request, as UTF-8 text. */
export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/**
 * Runs a real agent for one environment in front of `upstream`, lets `traffic` call through its
 * proxy, then closes it (which flushes and waits for the backend's acknowledgement). Resolves with
 * the capture id.
 */
export async function withAgent(
  backendUrl: string,
  token: string,
  upstream: string,
  environment: AgentEnvironment,
  traffic: (proxyUrl: string) => Promise<void>,
): Promise<string> {
  const agent = await startAgent({
    listen: '127.0.0.1:0',
    upstream,
    backend: backendUrl,
    token,
    environment,
    configPath: path.join(os.tmpdir(), 'spectator-no-service.yml'),
    logLevel: 'silent',
    tuning: { flushIntervalMs: 50, probeIntervalMs: 200, ackWaitMs: 10_000 },
  });
  try {
    await traffic(agent.proxyUrl);
    return agent.captureId();
  } finally {
    await agent.close();
  }
}

/** The users API as each pull request of the stories leaves it: v2 adds an optional `email`, v3 drops `name`. */
export type UsersVariant = 'v1' | 'v2' | 'v3';

/** A real users API of one variant on port 0. */
export function startUsersApi(variant: UsersVariant): Promise<LocalServer> {
  const user = (id: number): Record<string, unknown> => ({ id, name: `user ${id}` });
  const list = {
    v1: [user(1), user(2)],
    v2: [{ ...user(1), email: 'a@example.com' }, user(2)],
    v3: [{ id: 1 }, { id: 2 }],
  }[variant];
  return startJsonApp({
    'GET /users': () => ({ status: 200, body: list }),
    'POST /users': () => ({ status: 201, body: user(3) }),
    'GET /users/1': () => ({ status: 200, body: user(1) }),
  });
}

/**
 * Runs a real agent for an environment in front of a users API variant and sends the stories'
 * usual traffic (GET and POST /users, and GET /users/1 when asked). Resolves with the capture id.
 */
export async function runUsersTraffic(
  backendUrl: string,
  token: string,
  environment: AgentEnvironment,
  variant: UsersVariant,
  withUserById: boolean,
): Promise<string> {
  const app = await startUsersApi(variant);
  try {
    return await withAgent(backendUrl, token, app.url, environment, async (proxy) => {
      await call(proxy, 'GET', '/users');
      await call(proxy, 'POST', '/users', { name: 'new user' });
      if (withUserById) await call(proxy, 'GET', '/users/1');
    });
  } finally {
    await app.close();
  }
}

/** `fetch` JSON through a proxy and check the status. */
export async function call(base: string, method: string, route: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 500) throw new Error(`${method} ${route} → ${response.status}`);
  return response.json();
}

/**
 * Reports some exchanges as one agent connection of an environment (hello, one batch, ack) with
 * the hand-driven test agent (its capture left open); resolves with the capture id once the batch
 * is committed and its evidence folded (a staging or production batch's ack comes at its commit).
 */
export function report(
  backendUrl: string,
  token: string,
  environment: AgentEnvironment,
  exchanges: readonly TestExchange[],
): Promise<string> {
  return reporting(backendUrl, token, environment, exchanges, () => untilFolded(databaseUrlOf(backendUrl)));
}

/**
 * `report` without the wait for the fold: resolves with the capture id at the batch's ack (its
 * commit, for staging and production). Reports of many environments sent at once then wait for
 * their folds once (`untilFolded`), not for a fold (GATHER_MS and more) each in turn.
 */
export function reportQueued(
  backendUrl: string,
  token: string,
  environment: AgentEnvironment,
  exchanges: readonly TestExchange[],
): Promise<string> {
  return reporting(backendUrl, token, environment, exchanges, async () => {});
}

/** Hello, one batch and its ack on a new test agent connection; `acknowledged` runs before it closes. */
async function reporting(
  backendUrl: string,
  token: string,
  environment: AgentEnvironment,
  exchanges: readonly TestExchange[],
  acknowledged: () => Promise<void>,
): Promise<string> {
  const agent = await connectTestAgent(backendUrl, token);
  try {
    const hello = helloMessage({
      agentId: `agent-${environment.kind}-${environment.pullRequest ?? environment.build ?? ''}`,
      environment,
    });
    const welcome = await agent.request(hello);
    if (welcome.type !== 'welcome') throw new Error(`no welcome: ${JSON.stringify(welcome)}`);
    const batch = batchMessage(hello.capture.id, exchanges);
    const ack = await agent.request(batch);
    if (ack.type !== 'ack') throw new Error(`batch not acknowledged: ${JSON.stringify(ack)}`);
    await acknowledged();
    return hello.capture.id;
  } finally {
    await agent.close();
  }
}

/**
 * Documents `GET path` of a project in one step (a planned proposal, approved): it answers 200 with
 * a JSON object of these properties (JSON Schema), all required. Documenting it again makes its
 * next version (a changed type: the next major).
 */
export async function documentGet(
  backend: TestBackend,
  project: string,
  path: string,
  properties: Record<string, unknown>,
): Promise<void> {
  const proposal = await backend.api<ProposalResponse>('POST', `/projects/${project}/proposals`, {
    title: `document ${path}`,
    endpoints: [
      {
        method: 'GET',
        path,
        responses: [
          {
            status: 200,
            contentType: 'application/json',
            schema: { type: 'object', properties, required: Object.keys(properties) },
          },
        ],
      },
    ],
  });
  if (proposal.status !== 201) throw new Error(`proposal refused: ${JSON.stringify(proposal.body)}`);
  const approved = await backend.api('POST', `/projects/${project}/proposals/${proposal.body.id}/approve`);
  if (approved.status !== 200) throw new Error(`approval refused: ${JSON.stringify(approved.body)}`);
}

/** JSON Schema of a users list whose items have `fields` (`id` a number, the others strings), all required. */
export function usersSchema(fields: readonly string[]): Record<string, unknown> {
  return {
    type: 'array',
    items: {
      type: 'object',
      properties: Object.fromEntries(fields.map((field) => [field, { type: field === 'id' ? 'number' : 'string' }])),
      required: fields,
    },
  };
}

/**
 * Proposes and approves planned documentation of `GET /users` answering 200 with a users list of
 * `fields` (a field left out of the last plan is a breaking change). Resolves with the proposal id.
 */
export async function approveUsersPlan(
  backend: TestBackend,
  project: string,
  title: string,
  fields: readonly string[],
): Promise<string> {
  const made = await backend.api<{ id: string }>('POST', `/projects/${project}/proposals`, {
    title,
    endpoints: [
      {
        method: 'GET',
        path: '/users',
        responses: [{ status: 200, contentType: 'application/json', schema: usersSchema(fields) }],
      },
    ],
  });
  if (made.status !== 201) throw new Error(`proposal not made: ${made.status} ${JSON.stringify(made.body)}`);
  const approved = await backend.api('POST', `/projects/${project}/proposals/${made.body.id}/approve`);
  if (approved.status !== 200) throw new Error(`proposal not approved: ${approved.status}`);
  return made.body.id;
}
