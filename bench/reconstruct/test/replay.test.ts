// Saved traffic through the agent's observation pipeline (`--replay`): its hold on the saved times,
// the rows it sends, and the backend's regroup of what it says it learned.
import { pathDigest, sameRoute } from '../../../shared/src/index';
import { ObservationPipeline } from '../../../agent/src/observe/pipeline';
import { Metrics } from '../../../agent/src/metrics';
import { replayAgent } from '../lib/replay';
import type { Exchange } from '../lib/send';

let at = Date.parse('2026-11-28T00:00:00.000Z');
const exchange = (method: string, path: string, status: number, answer: unknown, body?: object): Exchange => ({
  request: {
    operation: 0,
    method,
    path,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    prefer: undefined,
  },
  url: `http://mock${path}`,
  startedAt: new Date((at += 500)).toISOString(),
  ms: 1,
  status,
  responseHeaders: { 'content-type': 'application/json', 'content-length': String(JSON.stringify(answer).length) },
  responseText: typeof answer === 'string' ? answer : JSON.stringify(answer),
});

const agent = { ObservationPipeline, Metrics, pathDigest, sameRoute };

describe('replayAgent', () => {
  it('gives the operations the agent sends, one per method and template, regrouped as the backend does', () => {
    const user = { login: 'x', id: 1, name: 'n' };
    const sent = { messageid: 'm', credits: 1 };
    const doc = replayAgent(
      [
        exchange('GET', '/users/alice?fields=login', 200, user),
        exchange('GET', '/users/nobody', 404, { message: 'Not Found' }),
        // After alice's hold: sent literal, then regrouped into /users/{user} once bob teaches it.
        ...Array.from({ length: 8 }, () => exchange('GET', '/health', 200, { ok: true })),
        exchange('GET', '/users/bob', 200, user),
        exchange('DELETE', '/users/carol', 204, ''),
        exchange('POST', '/message/send', 201, sent, { content: 'c', to: 't' }),
        exchange('POST', '/message/flash', 201, sent, { content: 'c', to: 't' }),
        exchange('GET', '/posts/17', 0, ''),
        exchange(
          'GET',
          '/orders/17',
          502,
          '{"statusCode":502,"error":"Bad Gateway","message":"upstream gave an invalid response"}',
        ),
      ],
      agent,
    );
    expect(Object.keys(doc.paths).sort()).toEqual(['/health', '/message/flash', '/message/send', '/users/{user}']);
    expect(Object.keys(doc.paths['/users/{user}'] ?? {}).sort()).toEqual(['delete', 'get']);
  });
});
