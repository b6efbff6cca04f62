import { createHmac } from 'node:crypto';
import { backoffMs, DELIVERY } from './webhooks.service';
import { signBody, verifySignature } from './signature';

describe('webhook signatures', () => {
  const body = JSON.stringify({ id: 'e1', type: 'proposal.step', data: { title: 'naïve ✓' } });

  it('is sha256=<hex HMAC-SHA256 of the UTF-8 body>', () => {
    expect(signBody('secret-123', body)).toBe(
      `sha256=${createHmac('sha256', 'secret-123').update(Buffer.from(body, 'utf8')).digest('hex')}`,
    );
  });

  it.each([
    ['the right signature', signBody('k'.repeat(16), body), true],
    ['a signature made with another secret', signBody('x'.repeat(16), body), false],
    ['a signature of another body', signBody('k'.repeat(16), `${body} `), false],
    ['a truncated signature', signBody('k'.repeat(16), body).slice(0, 20), false],
    ['no signature', undefined, false],
  ])('verifies %s', (_name, header, expected) => {
    expect(verifySignature('k'.repeat(16), body, header)).toBe(expected);
  });
});

describe('delivery backoff', () => {
  it('doubles from the first wait and stops growing at the cap', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffMs(30)).toBe(DELIVERY.maxBackoffMs);
  });
});
