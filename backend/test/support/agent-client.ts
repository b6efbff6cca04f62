import {
  type AgentMessage,
  type BackendMessage,
  type BatchMessage,
  fingerprint,
  addInstanceExtras,
  type HelloMessage,
  inferShape,
  instanceExtras,
  PROTOCOL_VERSION,
  ROUTES,
  type Shape,
  type TemplatesMessage,
  type WireObservation,
  REQUIRED_INSTANCES,
  withoutInstances,
} from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';

/** A hand-driven agent over a real WebSocket, for tests of the ingest protocol. */
export interface TestAgent {
  socket: WebSocket;
  /** Sends a message (or raw text) as one frame. */
  send(message: AgentMessage | string): void;
  /** The next backend message (waits up to `timeoutMs`). */
  next(timeoutMs?: number): Promise<BackendMessage>;
  /** Sends and waits for the answer. */
  request(message: AgentMessage | string, timeoutMs?: number): Promise<BackendMessage>;
  /** Resolves with the close code when the backend closes the connection. */
  closed: Promise<number>;
  /**
   * The `templates` messages the backend pushed (after documentation commits and path hints), in
   * order. They come unasked, so they are kept here rather than answering `next` or `request`.
   */
  templates: TemplatesMessage[];
  close(): Promise<void>;
}

/** Opens `WS /api/v1/agents/stream` with a bearer token; rejects with the HTTP status when the upgrade is refused. */
export function connectTestAgent(baseUrl: string, token: string | null): Promise<TestAgent> {
  const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${ROUTES.agentStream}`, {
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
  const inbox: BackendMessage[] = [];
  const waiters: Array<(message: BackendMessage) => void> = [];
  const templates: TemplatesMessage[] = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as BackendMessage;
    if (message.type === 'templates') {
      templates.push(message);
      return;
    }
    const waiter = waiters.shift();
    if (waiter) waiter(message);
    else inbox.push(message);
  });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  const agent: TestAgent = {
    socket,
    closed,
    templates,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: (timeoutMs = 30_000) => {
      const queued = inbox.shift();
      if (queued) return Promise.resolve(queued);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no message from the backend in time')), timeoutMs);
        waiters.push((message) => {
          clearTimeout(timer);
          resolve(message);
        });
      });
    },
    request: (message, timeoutMs) => {
      agent.send(message);
      return agent.next(timeoutMs);
    },
    close: async () => {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close();
      await closed;
    },
  };
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(agent));
    socket.once('unexpected-response', (_request, response) =>
      reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode })),
    );
    socket.once('error', reject);
  });
}

/**
 * Ends a capture as an agent that stops does, and waits for `capture-ended`: it comes once the
 * folds of the connection's batches ended, or after the backend's settle bound (5 s) when a fold
 * takes longer (a loaded machine): a test reading evidence after it waits `untilFolded` as well.
 * A staging or production batch's ack comes at its commit, before its fold.
 */
export async function endCapture(agent: TestAgent, captureId: string): Promise<void> {
  const ended = await agent.request({ type: 'capture-end', captureId, endedAt: new Date().toISOString() }, 10_000);
  if (ended.type !== 'capture-ended' || ended.captureId !== captureId)
    throw new Error(`capture ${captureId} not ended: ${JSON.stringify(ended)}`);
}

/** A hello for a new capture. */
export function helloMessage(overrides: Partial<HelloMessage> = {}): HelloMessage {
  return {
    type: 'hello',
    protocol: PROTOCOL_VERSION,
    agentId: 'test-agent',
    agentVersion: '0.0.0-test',
    environment: { kind: 'local' },
    capture: { id: randomUUID(), startedAt: new Date().toISOString(), reason: 'agent-start' },
    rules: [],
    ...overrides,
  };
}

/** An exchange to put in a batch: bodies are given as JSON values and shaped here. */
export interface TestExchange {
  method: string;
  path: string;
  status: number;
  request?: unknown;
  response?: unknown;
  count?: number;
  /** Calls per consumer pseudonym (as agents started with `--consumer` send them). */
  consumers?: WireObservation['consumers'];
  consumersOverflow?: number;
}

/** A batch for some exchanges, with the shapes they reference. */
export function batchMessage(
  captureId: string,
  exchanges: readonly TestExchange[],
  batchId: string = randomUUID(),
): BatchMessage {
  const shapes: Record<string, Shape> = {};
  // As the agent sends a body: the shape without its instance counts, which travel beside its
  // fingerprint (`instances`), added up over the row's `count` exchanges while fewer than four.
  const body = (value: unknown, count: number): WireObservation['request'] => {
    if (value === undefined) return null;
    const shape = inferShape(value);
    const fp = fingerprint(shape);
    shapes[fp] = withoutInstances(shape);
    let extras = '';
    if (count < REQUIRED_INSTANCES)
      for (let i = 0; i < count; i++) extras = addInstanceExtras(extras, instanceExtras(shape));
    return extras === ''
      ? { contentType: 'application/json', shape: fp }
      : { contentType: 'application/json', shape: fp, instances: extras };
  };
  const now = new Date().toISOString();
  const observations = exchanges.map((e): WireObservation => ({
    method: e.method,
    path: e.path,
    status: e.status,
    query: [],
    requestHeaders: ['content-type'],
    responseHeaders: ['content-type'],
    request: body(e.request, e.count ?? 1),
    response: body(e.response, e.count ?? 1),
    count: e.count ?? 1,
    firstSeen: now,
    lastSeen: now,
    ...(e.consumers ? { consumers: e.consumers } : {}),
    ...(e.consumersOverflow ? { consumersOverflow: e.consumersOverflow } : {}),
  }));
  return { type: 'batch', batchId, captureId, shapes, observations };
}
