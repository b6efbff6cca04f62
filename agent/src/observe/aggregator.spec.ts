import fc from 'fast-check';
import { histogramBucket, LatencyHistogram } from '@spectator/shared';
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
    firstByte: 4,
    lastByte: 9,
    clientLeft: false,
    ...overrides,
  };
}

describe('Aggregator', () => {
  it("adds up the instance counts of a row's bodies beside their fingerprint, and drops them from six exchanges", () => {
    const counted = (shape: string, instances?: string): BodySummary => ({
      ...json(shape),
      ...(instances === undefined ? {} : { instances }),
    });
    const aggregator = new Aggregator();
    // Lists of two, one and three records: one row, its records beyond one per exchange added up.
    aggregator.add(observation({ response: counted('a', '01') }));
    aggregator.add(observation({ response: counted('a') }));
    aggregator.add(observation({ response: counted('a', '02') }));
    aggregator.add(observation({ status: 201, response: counted('a', '01'), request: counted('r', '1') }));
    expect(aggregator.drain()[0]?.observations.map((o) => [o.status, o.count, o.request, o.response])).toEqual([
      [200, 3, null, { contentType: 'application/json', shape: 'a', instances: '03' }],
      [
        201,
        1,
        { contentType: 'application/json', shape: 'r', instances: '1' },
        { contentType: 'application/json', shape: 'a', instances: '01' },
      ],
    ]);
    // Five exchanges keep their extras, up to five a place.
    for (let i = 0; i < 5; i++) aggregator.add(observation({ response: counted('a', '02') }));
    expect(aggregator.drain()[0]?.observations[0]?.response).toEqual({
      contentType: 'application/json',
      shape: 'a',
      instances: '05',
    });
    // Six exchanges show six objects at every place anyway: nothing beside the fingerprint.
    for (let i = 0; i < 6; i++) aggregator.add(observation({ response: counted('a', '01') }));
    expect(aggregator.drain()[0]?.observations[0]?.response).toEqual({ contentType: 'application/json', shape: 'a' });
  });

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

  it('unions the header names of every message of a row, whatever their order and repeats', () => {
    // Names repeat in the same order most of the time (one client, one app): the row compares them
    // with the last message's; any other order, fewer or more names must still union right.
    const names = fc.constantFrom('accept', 'host', 'x-a', 'x-b', 'x-c', 'user-agent', 'content-type');
    const message = fc.uniqueArray(names, { maxLength: 6 });
    fc.assert(
      fc.property(fc.array(fc.tuple(message, message), { minLength: 1, maxLength: 8 }), (messages) => {
        const aggregator = new Aggregator();
        const asHeaders = (list: string[]) => Object.fromEntries(list.map((name) => [name, 'v']));
        for (const [request, response] of messages)
          aggregator.add(observation({ requestHeaders: asHeaders(request), responseHeaders: asHeaders(response) }));
        const [row] = aggregator.drain()[0]!.observations;
        expect(row!.requestHeaders).toEqual([...new Set(messages.flatMap(([request]) => request))].sort());
        expect(row!.responseHeaders).toEqual([...new Set(messages.flatMap(([, response]) => response))].sort());
      }),
    );
  });

  it('counts the answers whose Sunset date had passed when seen, never sending the date', () => {
    const past = 'Sun, 06 Nov 1994 08:49:37 GMT';
    const future = 'Fri, 01 Jan 2100 00:00:00 GMT';
    const aggregator = new Aggregator();
    const at = Date.parse('2026-11-28T12:00:00Z');
    aggregator.add(observation({ at, responseHeaders: { sunset: past } }));
    aggregator.add(observation({ at, responseHeaders: { sunset: [past] } }));
    aggregator.add(observation({ at, responseHeaders: { sunset: future } }));
    aggregator.add(observation({ at, responseHeaders: { sunset: 'not a date' } }));
    aggregator.add(observation({ at, status: 201, responseHeaders: { sunset: future } }));
    // The same date is past for an answer seen after it, not for one seen before.
    aggregator.add(
      observation({ at: Date.parse('1994-11-06T08:00:00Z'), status: 202, responseHeaders: { sunset: past } }),
    );
    const [group] = aggregator.drain();
    expect(group?.observations.map((o) => [o.status, o.count, o.sunsetPast])).toEqual([
      [200, 4, 2],
      [201, 1, undefined],
      [202, 1, undefined],
    ]);
    const sent = JSON.stringify(group);
    for (const value of [past, future]) expect(sent).not.toContain(value);
  });

  it('times each row: time to first and last byte as histograms, and the exchanges the client left', () => {
    const aggregator = new Aggregator();
    aggregator.add(observation({ firstByte: 4.2, lastByte: 9 }));
    aggregator.add(observation({ firstByte: 4.3, lastByte: 120 }));
    aggregator.add(observation({ firstByte: 30, lastByte: -1, clientLeft: true }));
    aggregator.add(observation({ status: 500, firstByte: 0.2, lastByte: 0.3 }));
    const [group] = aggregator.drain();
    const [ok, failed] = group?.observations ?? [];
    expect(ok?.count).toBe(3);
    expect(ok?.runtime).toEqual({
      ttfb: { [histogramBucket(4.2)]: 2, [histogramBucket(30)]: 1 },
      // The exchange the client left has no last byte.
      ttlb: { [histogramBucket(9)]: 1, [histogramBucket(120)]: 1 },
      clientLeft: 1,
    });
    const slowest = LatencyHistogram.fromWire(ok?.runtime?.ttlb ?? {}).quantile(1) as number;
    expect(Math.abs(slowest - 120) / 120).toBeLessThan(0.1);
    expect(failed?.runtime).toEqual({ ttfb: { [histogramBucket(0.2)]: 1 }, ttlb: { [histogramBucket(0.3)]: 1 } });
  });

  it('counts requests the upstream never answered apart from the rows, per status, method and template', () => {
    const aggregator = new Aggregator();
    aggregator.add(observation({}));
    aggregator.addFailure('c1', 'GET', '/posts', 503, 2, 3_000);
    aggregator.addFailure('c1', 'GET', '/posts', 503, 3, 2_000);
    aggregator.addFailure('c1', 'GET', '/posts', 504, 30_000, 4_000);
    aggregator.addFailure('c2', 'POST', '/posts', 0, 12, 5_000);
    expect(aggregator.size).toBe(4);
    const [first, second] = aggregator.drain();
    expect(first?.observations).toHaveLength(1);
    expect(first?.failures).toEqual([
      {
        method: 'GET',
        path: '/posts',
        status: 503,
        count: 2,
        firstSeen: new Date(2_000).toISOString(),
        lastSeen: new Date(3_000).toISOString(),
        elapsed: { [histogramBucket(2)]: 1, [histogramBucket(3)]: 1 },
      },
      expect.objectContaining({ status: 504, count: 1, elapsed: { [histogramBucket(30_000)]: 1 } }),
    ]);
    // A capture with failures only still makes a group.
    expect(second).toMatchObject({ captureId: 'c2', observations: [], failures: [{ status: 0, method: 'POST' }] });
    expect(aggregator.drain()).toEqual([]);
  });

  it('counts each (capture, method, template, status, body keys) in a row of its own, however many a template has', () => {
    const part = <T>(values: readonly T[]) => fc.constantFrom(...values);
    const key = fc.tuple(
      part(['c1', 'c2']),
      part(['GET', 'POST', 'PUT']),
      part(['/a', '/b']),
      part([200, 201, 404, 500]),
      part(['-', 'x', 'y']),
      part(['-', 'x', 'y']),
    );
    fc.assert(
      fc.property(fc.array(key, { minLength: 20, maxLength: 300, size: 'max' }), (keys) => {
        const aggregator = new Aggregator();
        const expected = new Map<string, number>();
        for (const [captureId, method, template, status, request, response] of keys) {
          const id = JSON.stringify([captureId, method, template, status, request, response]);
          expected.set(id, (expected.get(id) ?? 0) + 1);
          aggregator.add(
            observation({
              captureId,
              method,
              template,
              status,
              request: request === '-' ? null : json(request),
              response: response === '-' ? null : json(response),
            }),
          );
        }
        expect(aggregator.size).toBe(expected.size);
        const counted = new Map<string, number>();
        for (const group of aggregator.drain())
          for (const o of group.observations)
            counted.set(
              JSON.stringify([
                group.captureId,
                o.method,
                o.path,
                o.status,
                o.request?.shape ?? '-',
                o.response?.shape ?? '-',
              ]),
              o.count,
            );
        expect(counted).toEqual(expected);
      }),
    );
  });
});
