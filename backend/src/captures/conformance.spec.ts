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
});
