import { isDocumentableHeader } from './headers';

describe('isDocumentableHeader', () => {
  it.each(['x-tenant', 'X-Tenant', 'idempotency-key', 'x-api-version', 'prefer', 'x-csrf-token'])(
    'documents %s',
    (name) => {
      expect(isDocumentableHeader(name)).toBe(true);
    },
  );

  it.each([
    'host',
    'Connection',
    'content-length',
    'content-type',
    'accept',
    'accept-encoding',
    'accept-language',
    'user-agent',
    'authorization',
    'cookie',
    'x-forwarded-for',
    'x-forwarded-proto',
    'forwarded',
    'via',
    'sec-fetch-mode',
    'sec-ch-ua',
    'origin',
    'referer',
    'if-none-match',
    'cache-control',
    'traceparent',
    'tracestate',
    'transfer-encoding',
    ':authority',
  ])('leaves out the standard header %s', (name) => {
    expect(isDocumentableHeader(name)).toBe(false);
  });
});
