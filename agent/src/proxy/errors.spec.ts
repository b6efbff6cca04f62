import { upstreamFailure } from './errors';

describe('upstreamFailure', () => {
  it.each([
    ['ECONNREFUSED', 503],
    ['ENOTFOUND', 503],
    ['UND_ERR_HEADERS_TIMEOUT', 504],
    ['UND_ERR_CONNECT_TIMEOUT', 504],
    ['ECONNRESET', 502],
    ['UND_ERR_SOCKET', 502],
    ['HPE_INVALID_CONSTANT', 502],
  ])('%s → %i', (code, status) => {
    expect(upstreamFailure(Object.assign(new Error('x'), { code })).statusCode).toBe(status);
  });

  it('looks into the cause undici wraps around socket errors', () => {
    expect(
      upstreamFailure(
        new Error('fetch failed', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) }),
      ),
    ).toMatchObject({ statusCode: 503, code: 'ECONNREFUSED' });
  });
});
