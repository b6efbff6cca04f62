import { Aggregator, type Observation } from './aggregator';
import type { BodySummary } from './summarise';

const json = (shape: string): BodySummary => ({
  body: { contentType: 'application/json', shape },
  key: `application/json|${shape}|`,
});

function observation(overrides: Partial<Observation>): Observation {
  return {
    captureId: 'c1',
    method: 'GET',
    template: '/posts',
    path: undefined,
    status: 200,
    query: [],
    requestHeaders: { accept: '*/*', connection: 'keep-alive' },
    responseHeaders: { 'content-type': 'application/json' },
    request: null,
    response: json('a'),
    at: 1_000,
    ...overrides,
  };
}

describe('Aggregator', () => {
  it('counts one row per capture, method, template, status and body pair, with names unioned and first/last seen', () => {
    const aggregator = new Aggregator();
    aggregator.add(observation({ at: 2_000, query: ['page'] }));
    aggregator.add(observation({ at: 1_000, requestHeaders: { accept: '*/*', 'x-trace': 'abc' } }));
    aggregator.add(observation({ response: json('b') }));
    aggregator.add(observation({ status: 404 }));
    aggregator.add(observation({ method: 'POST', request: json('a') }));
    aggregator.add(observation({ captureId: 'c2' }));
    expect(aggregator.size).toBe(5);

    const [first, second] = aggregator.drain();
    expect(first?.captureId).toBe('c1');
    expect(first?.observations.map((o) => [o.method, o.path, o.status, o.response?.shape, o.count])).toEqual([
      ['GET', '/posts', 200, 'a', 2],
      ['GET', '/posts', 200, 'b', 1],
      ['GET', '/posts', 404, 'a', 1],
      ['POST', '/posts', 200, 'a', 1],
    ]);
    expect(first?.observations[0]).toMatchObject({
      query: ['page'],
      requestHeaders: ['accept', 'x-trace'],
      firstSeen: new Date(1_000).toISOString(),
      lastSeen: new Date(2_000).toISOString(),
    });
    expect(second?.captureId).toBe('c2');
    expect(aggregator.size).toBe(0);
    expect(aggregator.drain()).toEqual([]);
  });
});
