import fc from 'fast-check';
import { BodyTap } from './exchange';
import { keyFingerprint, NOVELTY_BYTES, SCAN_BYTES } from './novelty';

/** FNV-1a over a key as written in JSON (between its quotes), each escape and the character it escapes left out. */
function keyHash(written: string): number {
  const bytes = Buffer.from(written);
  let hash = 0x811c9dc5;
  for (let k = 0; k < bytes.length; k++) {
    if (bytes[k] === 0x5c) k++;
    else hash = Math.imul(hash ^ (bytes[k] as number), 0x01000193);
  }
  return hash >>> 0;
}

/** The fingerprint as its definition states it: each distinct key's hash, combined regardless of order. */
function expected(keys: Iterable<string>): number {
  let combined = 0;
  for (const hash of new Set([...keys].map((key) => keyHash(JSON.stringify(key).slice(1, -1)))))
    combined = (combined + Math.imul(hash, 0x9e3779b1)) | 0;
  return combined >>> 0;
}

/** Every object key of a JSON value, at any depth. */
function keysOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (value !== null && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) {
      into.push(key);
      keysOf(inner, into);
    }
  return into;
}

const fingerprintOf = (text: string) => keyFingerprint(Buffer.from(text));

describe('keyFingerprint', () => {
  it('combines the hashes of the distinct keys of a text it sees whole, whatever their values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.boolean(), (value, indent) => {
        const text = JSON.stringify(value, null, indent ? 2 : undefined);
        fc.pre(Buffer.byteLength(text) < SCAN_BYTES);
        expect(fingerprintOf(text)).toBe(expected(keysOf(value)));
      }),
    );
  });

  it.each([
    ['escaped quotes and backslashes in keys', '{"a\\"b":1,"c\\\\":{"d":"e\\"f"}}', ['a"b', 'c\\', 'd']],
    ['a string value with an escaped quote before a colon-like byte', '{"a":"x\\":","b":2}', ['a', 'b']],
    ['whitespace between a key and its colon', '{"a" \n\t: 1}', ['a']],
    ['non-ASCII keys', '{"naïve":1,"名前":2}', ['naïve', '名前']],
    ['no keys', '["a","b",1]', []],
  ])('reads %s', (_name, text, keys) => {
    expect(fingerprintOf(text)).toBe(expected(keys));
  });

  it('ignores order, repeats and keys past the bytes it scans', () => {
    expect(fingerprintOf('{"a":1,"b":2}')).toBe(fingerprintOf('{"b":[{"a":3}],"a":{"b":4}}'));
    const padded = `{"a":"${'x'.repeat(SCAN_BYTES)}","late":1}`;
    expect(fingerprintOf(padded)).toBe(expected(['a']));
    // A string the scanned bytes cut off is no key.
    expect(fingerprintOf(`{"a":1,"${'k'.repeat(SCAN_BYTES)}":2}`)).toBe(expected(['a']));
  });
});

describe('BodyTap.variantKeys', () => {
  const tapOf = (keysOnArrival: boolean, limit = 1024 * 1024) =>
    new BodyTap({
      contentType: 'application/json',
      contentEncoding: '',
      limit,
      copy: true,
      prefix: true,
      keysOnArrival,
    });

  it('gives, taken from each chunk as it comes, what the whole body gives, however the body is split', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        fc.array(fc.nat({ max: 2 * SCAN_BYTES }), { maxLength: 6 }),
        (value, cuts) => {
          const whole = Buffer.from(JSON.stringify(value));
          const arriving = tapOf(true);
          const asked = tapOf(false);
          let at = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            const chunk = whole.subarray(at, Math.max(at, Math.min(cut, whole.length)));
            if (chunk.length === 0) continue;
            arriving.write(chunk);
            asked.write(chunk);
            at += chunk.length;
          }
          if (at < whole.length) {
            arriving.write(whole.subarray(at));
            asked.write(whole.subarray(at));
          }
          const expected = whole.length > NOVELTY_BYTES ? null : keyFingerprint(whole);
          expect(arriving.variantKeys()).toBe(expected);
          expect(asked.variantKeys()).toBe(expected);
        },
      ),
    );
  });

  it('reads a key that starts in a short first chunk and ends in the next', () => {
    const tap = tapOf(true);
    tap.write(Buffer.from('{"na'));
    tap.write(Buffer.from('me":1}'));
    expect(tap.variantKeys()).toBe(expected(['name']));
  });

  it('gives none for a body cut short, past its limit, encoded or not JSON', () => {
    const cut = tapOf(true);
    cut.write(Buffer.from('{"a":1}'));
    cut.cutShort();
    const over = tapOf(true, 4);
    over.write(Buffer.from('{"a":1}'));
    const encoded = new BodyTap({
      contentType: 'application/json',
      contentEncoding: 'gzip',
      limit: 1024,
      copy: true,
    });
    encoded.write(Buffer.from('{"a":1}'));
    const text = new BodyTap({ contentType: 'text/plain', contentEncoding: '', limit: 1024, copy: true });
    text.write(Buffer.from('{"a":1}'));
    expect([cut, over, encoded, text].map((tap) => tap.variantKeys())).toEqual([null, null, null, null]);
  });
});
