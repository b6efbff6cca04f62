import type { EndpointShapes, Shape } from '@spectator/shared';
import { ConformanceCache } from './conformance';
import type { ObservationRow } from './observed-shapes';

/** GET /posts, documented with `?limit` only and no bodies. */
const version: EndpointShapes = {
  request: null,
  responses: [{ status: 200, contentType: null, shape: null }],
  parameters: { query: [{ name: 'limit', required: false }], headers: [] },
};

const row = (query: string[]): ObservationRow => ({
  method: 'GET',
  path: '/posts',
  status: 200,
  requestContentType: null,
  requestShape: null,
  responseContentType: null,
  responseShape: null,
  count: 1,
  query,
  requestHeaders: [],
});

describe('ConformanceCache', () => {
  const shapes = new Map<string, Shape>();

  it('tells rows of equal shapes apart by their parameter names (the first answer is not reused for the second)', () => {
    const cache = new ConformanceCache();
    expect(cache.conforms('v1', version, row(['limit']), shapes)).toBe(true);
    expect(cache.conforms('v1', version, row(['limit', 'page']), shapes)).toBe(false);
    expect(cache.conforms('v1', version, row(['limit']), shapes)).toBe(true);
  });

  it('answers no for a version that is gone', () => {
    expect(new ConformanceCache().conforms('v0', undefined, row([]), shapes)).toBe(false);
  });

  it('holds an endpoint removed by a version conformed to by 404, 405 and 410 only', () => {
    const cache = new ConformanceCache();
    const removed = { request: null, responses: [], removed: true };
    const answered = (status: number): ObservationRow => ({
      ...row([]),
      status,
      responseContentType: 'application/json',
    });
    for (const status of [404, 405, 410]) expect(cache.conforms('v2', removed, answered(status), shapes)).toBe(true);
    for (const status of [200, 204, 400, 500])
      expect(cache.conforms('v2', removed, answered(status), shapes)).toBe(false);
    // The version before it documents 200, not 404.
    expect(cache.conforms('v1', version, answered(404), shapes)).toBe(false);
  });
});
