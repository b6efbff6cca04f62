import fc from 'fast-check';
import { ConsumerIds, consumerId, scanClaim } from './consumers';

/** The claim as parsing the whole payload gives it (the reference the scan must equal). */
function parsed(text: string, claim: string): string {
  const payload = JSON.parse(text) as Record<string, unknown>;
  const value = payload[claim];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

const CLAIMS = ['sub', 'client_id', 'azp'];

/** The scan of a text's UTF-8 bytes. */
function scan(text: string, claim: string): string | undefined {
  const bytes = Buffer.from(text);
  return scanClaim(bytes, bytes.length, claim);
}

describe('scanClaim', () => {
  it.each([
    ['a string', '{"sub":"u-1","iat":1}', 'sub', 'u-1'],
    ['a number', '{"client_id": 12 , "x": [1,2]}', 'client_id', '12'],
    ['a number as JSON reads it', '{"client_id":1.50e3}', 'client_id', '1500'],
    ['the last of duplicate keys', '{"sub":"a","sub":"b"}', 'sub', 'b'],
    ['only the first level', '{"act":{"sub":"admin"},"aud":["sub",":"]}', 'sub', ''],
    ['none for an object, true or null', '{"sub":{"id":1},"azp":true,"client_id":null}', 'sub', ''],
    ['none when absent', '{}', 'azp', ''],
    ['spaces and new lines', '\n{ "azp" :\t"web" }\n', 'azp', 'web'],
  ])('reads %s', (_what, text, claim, value) => {
    expect(scan(text, claim)).toBe(value);
    expect(parsed(text, claim)).toBe(value);
  });

  it('reads a value beyond ASCII as its UTF-8 text', () => {
    expect(scan('{"sub":"Zoë 🚀","azp":"ü"}', 'sub')).toBe('Zoë 🚀');
  });

  it('reads only the first `length` bytes (the rest of a reused buffer is stale)', () => {
    const bytes = Buffer.from('{"sub":"a"}{"sub":"b"}');
    expect(scanClaim(bytes, 11, 'sub')).toBe('a');
    expect(scanClaim(bytes, 9, 'sub')).toBeUndefined();
  });

  it.each([
    ['an escape', '{"sub":"a\\"b"}'],
    ['no object', '["sub"]'],
    ['an unfinished string', '{"sub":"a'],
    ['text after the object', '{"sub":"a"} x'],
    ['a number JSON does not allow', '{"sub":01}'],
    ['a key without a colon', '{"sub" "a"}'],
  ])('leaves %s to the parser', (_what, text) => {
    expect(scan(text, 'sub')).toBeUndefined();
  });

  it('gives what parsing gives, for any JSON object, whenever it reads one', () => {
    let scanned = 0;
    const payload = fc.dictionary(
      fc.oneof(fc.constantFrom(...CLAIMS), fc.string(), fc.string({ unit: 'binary' })),
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.jsonValue(),
      ),
    );
    fc.assert(
      fc.property(payload, fc.constantFrom(...CLAIMS), fc.boolean(), (object, claim, indent) => {
        const text = JSON.stringify(object, null, indent ? 2 : undefined);
        const value = scan(text, claim);
        if (value === undefined) return;
        scanned++;
        expect(value).toBe(parsed(text, claim));
      }),
      { numRuns: 2_000 },
    );
    // Most payloads have no backslash: the scan reads them.
    expect(scanned).toBeGreaterThan(500);
  });
});

describe('ConsumerIds', () => {
  const config = {
    sources: [{ kind: 'jwt' as const, claim: 'client_id' as const }],
    key: 'k'.repeat(16),
    project: 'p',
  };
  const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const bearer = (claims: object, signature: string): string =>
    `Bearer ${base64url({ alg: 'RS256' })}.${base64url(claims)}.${signature}`;

  it('names a client the same through new tokens, and as consumer-id does', () => {
    const ids = new ConsumerIds(config);
    const expected = consumerId('k'.repeat(16), 'p', 'mobile');
    for (let i = 0; i < 3; i++)
      expect(ids.identify({ authorization: bearer({ client_id: 'mobile', iat: i }, `sig${i}`) }, undefined)).toBe(
        expected,
      );
    // A payload with an escape is parsed: the same claim, the same pseudonym.
    expect(ids.identify({ authorization: bearer({ client_id: 'mobile', note: 'a"b' }, 's') }, undefined)).toBe(
      expected,
    );
    // Payloads are decoded into one buffer: a larger one gets its own; a short one after a long one
    // reads only its own bytes.
    const named = (claims: object): string | null => ids.identify({ authorization: bearer(claims, 's') }, undefined);
    expect(named({ client_id: 'mobile', pad: 'x'.repeat(5_000) })).toBe(expected);
    expect(named({ client_id: 'web', pad: 'y'.repeat(1_000) })).toBe(consumerId('k'.repeat(16), 'p', 'web'));
    expect(named({ client_id: 'app' })).toBe(consumerId('k'.repeat(16), 'p', 'app'));
    expect(named({ client_id: 'Zoë' })).toBe(consumerId('k'.repeat(16), 'p', 'Zoë'));
    expect(ids.identify({ authorization: bearer({ sub: 'x' }, 's') }, undefined)).toBeNull();
    expect(ids.identify({ authorization: 'Bearer not-a-jwt' }, undefined)).toBeNull();
  });
});
