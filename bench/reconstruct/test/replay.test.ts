// The learner replayed on saved traffic (`--replay`): fed as the agent feeds it, its final templates.
import { PathLearner, inferShape, responseKeys, templatePath } from '../../../shared/src/index';
import { replayTemplates } from '../lib/replay';
import type { Exchange } from '../lib/send';

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
  startedAt: '2026-11-28T00:00:00.000Z',
  ms: 1,
  status,
  responseHeaders: { 'content-type': 'application/json' },
  responseText: JSON.stringify(answer),
});

const shared = { PathLearner, inferShape, responseKeys, templatePath };

describe('replayTemplates', () => {
  it('gives the templates the learner ends with, one operation per method and template', () => {
    const user = { login: 'x', id: 1, name: 'n' };
    const sent = { messageid: 'm', credits: 1 };
    const doc = replayTemplates(
      [
        exchange('GET', '/users/alice?fields=login', 200, user),
        exchange('GET', '/users/nobody', 404, { message: 'Not Found' }),
        exchange('GET', '/users/bob', 200, user),
        exchange('DELETE', '/users/carol', 204, ''),
        exchange('POST', '/message/send', 201, sent, { content: 'c', to: 't' }),
        exchange('POST', '/message/flash', 201, sent, { content: 'c', to: 't' }),
        exchange('GET', '/posts/17', 0, ''),
      ],
      shared,
    );
    expect(Object.keys(doc.paths).sort()).toEqual(['/message/flash', '/message/send', '/users/{user}']);
    expect(Object.keys(doc.paths['/users/{user}'] ?? {}).sort()).toEqual(['delete', 'get']);
  });
});
