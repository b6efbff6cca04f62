import fc from 'fast-check';
import { BodyTap } from './exchange';
import {
  flatStructure,
  KEY_SCAN,
  keyFingerprint,
  mixHashes,
  NOVELTY_BYTES,
  SCAN_BURST_BYTES,
  SCAN_BYTES,
  SCAN_BYTES_PER_SECOND,
  ScanBudget,
  structureFingerprint,
} from './novelty';

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

/** The structure fingerprint as its definition states it, from the parsed value: each object's key set at its place. */
function expectedStructure(value: unknown): number {
  const structures = new Set<number>();
  const walk = (inner: unknown, place: number): void => {
    if (Array.isArray(inner)) for (const item of inner) walk(item, mixHashes(place, 0x5bdd5d));
    else if (inner !== null && typeof inner === 'object') {
      let keys = 0;
      for (const [key, nested] of Object.entries(inner)) {
        const hash = keyHash(JSON.stringify(key).slice(1, -1)) | 0;
        keys = (keys + Math.imul(hash, 0x9e3779b1)) | 0;
        walk(nested, mixHashes(place, hash));
      }
      structures.add(mixHashes(place, keys));
    }
  };
  walk(value, 0x811c9dc5 | 0);
  let combined = 0;
  for (const structure of structures) combined = (combined + Math.imul(structure, 0x9e3779b1)) | 0;
  return combined >>> 0;
}

/** `count` records; the one at `odd` (if any) lacks `price` and has `discount`. */
const records = (count: number, odd = -1) =>
  Array.from({ length: count }, (_, i) => ({
    id: i,
    name: `item ${i}`,
    ...(i === odd ? { discount: 0.5 } : { price: i * 1.5 }),
    owner: { login: `user${i}`, id: i },
  }));

describe('structureFingerprint', () => {
  const structureOf = (text: string) => structureFingerprint(Buffer.from(text));

  it('combines the structures of the objects of a whole text, each its keys at its place, whatever the values', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), (value, indent) => {
        const text = JSON.stringify(value, null, indent ? 2 : undefined);
        expect(structureOf(text)).toBe(expectedStructure(JSON.parse(text)));
      }),
    );
  });

  it('tells apart two bodies that differ only past the bytes keyFingerprint reads, however far', () => {
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 150 }), fc.nat(), fc.nat(), (count, odd, other) => {
        const plain = JSON.stringify({ items: records(count) });
        // One record of the list, past the first 256 bytes, lacks a field and has another.
        const at = 5 + (odd % (count - 5));
        const variant = JSON.stringify({ items: records(count, at) });
        expect(keyFingerprint(Buffer.from(variant))).toBe(keyFingerprint(Buffer.from(plain)));
        expect(structureOf(variant)).not.toBe(structureOf(plain));
        // The same structure again, with another length and other values, is no new variant.
        const longer = JSON.stringify({ items: records(count + 1 + (other % 40), at + 1 + (other % 5)) });
        expect(structureOf(longer)).toBe(structureOf(variant));
        expect(structureOf(JSON.stringify({ items: records(3 + (other % 40)) }))).toBe(structureOf(plain));
      }),
    );
  });

  it.each([
    ['a key set at another place', '{"a":{"x":1},"b":{"y":1}}', '{"a":{"y":1},"b":{"x":1}}'],
    ['an object or a list of it', '{"a":{"x":1}}', '{"a":[{"x":1}]}'],
    ['an empty object or none', '{"a":{}}', '{"a":null}'],
    ['a field of one item', '[{"x":1},{"x":2,"y":3}]', '[{"x":1,"y":3},{"x":2,"y":3}]'],
  ])('tells apart %s', (_name, one, other) => {
    expect(structureOf(one)).not.toBe(structureOf(other));
  });

  it('reads a key alike wherever it starts: after `{` or `,` and blanks (hashed as read), or elsewhere', () => {
    const long = 'k'.repeat(40);
    for (const key of ['a', 'a\\"b', long, `${long}\\\\`, `\\u0041${long}`]) {
      const expected = structureOf(`{"${key}":1,"z":2}`);
      expect(structureOf(`{ \n "${key}" :1 ,\t"z":2}`)).toBe(expected);
      expect(structureOf(`{"z":2,"${key}":1}`)).toBe(expected);
      // No comma before it: not where a key starts, so read again once its colon is found.
      expect(structureOf(`{"z":2 "${key}":1}`)).toBe(expected);
    }
  });

  it('reads keys with escapes, blanks before the colon, and long strings', () => {
    const long = 'x'.repeat(100);
    expect(structureOf(`{"a\\"b":{"c\\\\":"${long}\\"${long}","d" :1}}`)).toBe(
      expectedStructure({ 'a"b': { 'c\\': '', d: 1 } }),
    );
  });
});

describe('flatStructure', () => {
  /** Texts near JSON: JSON values, indented or not, and the same with bytes that matter to a scan put in or taken out. */
  const nearJson = fc
    .tuple(
      fc.jsonValue({ maxDepth: 3 }),
      fc.boolean(),
      fc.array(fc.tuple(fc.nat(), fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', ' ', 'x', '')), {
        maxLength: 3,
      }),
    )
    .map(([value, indent, edits]) => {
      let text = JSON.stringify(value, null, indent ? 2 : undefined);
      for (const [at, byte] of edits) {
        const where = at % (text.length + 1);
        text =
          byte === '' ? text.slice(0, where) + text.slice(where + 1) : text.slice(0, where) + byte + text.slice(where);
      }
      return text;
    });
  // Keys without escapes: the key scan leaves an escape out of a key's hash (a key written `"\\"` hashes as `""`), so
  // two keys with escapes may be one to it, and the text is then not found flat (read again, as before).
  const flatObject = fc
    .dictionary(
      fc.string({ maxLength: 12 }).filter((key) => ![...key].some((c) => c === '"' || c === '\\' || c < ' ')),
      fc.oneof(fc.string({ maxLength: 40 }), fc.double(), fc.boolean(), fc.constant(null)),
      {
        maxKeys: 12,
      },
    )
    .chain((value) => fc.boolean().map((indent) => JSON.stringify(value, null, indent ? 2 : undefined)));

  it('equals the structure scan for every text the key scan finds flat, JSON or not', () => {
    fc.assert(
      fc.property(fc.oneof(nearJson, flatObject), (text) => {
        const bytes = Buffer.from(text);
        const keys = keyFingerprint(bytes);
        if (KEY_SCAN.flat) expect(flatStructure(keys)).toBe(structureFingerprint(bytes));
      }),
      { numRuns: 2_000 },
    );
  });

  it('is found for a flat object read whole, and for no other text', () => {
    fc.assert(
      fc.property(flatObject, (text) => {
        keyFingerprint(Buffer.from(text));
        expect(KEY_SCAN.flat).toBe(Buffer.byteLength(text) <= SCAN_BYTES);
      }),
    );
    const flat = (text: string) => {
      keyFingerprint(Buffer.from(text));
      return KEY_SCAN.flat;
    };
    expect(flat('{"title":"Hello from the bench","author":"Ann"}')).toBe(true);
    expect(flat(' {} ')).toBe(true);
    expect(flat('{"a":{}}')).toBe(false);
    expect(flat('{"a":[1]}')).toBe(false);
    expect(flat('[{"a":1}]')).toBe(false);
    expect(flat('{"a":1,"a":2}')).toBe(false);
    expect(flat('"a":{"b":1}')).toBe(false);
    expect(flat('{"a":"}')).toBe(false);
    expect(flat('{"a":1}{"b":2}')).toBe(false);
    expect(flat(`{"a":"${'x'.repeat(SCAN_BYTES)}"}`)).toBe(false);
  });
});

describe('ScanBudget', () => {
  it('lets its burst through, then as many as the clock earns, and never saves more than its burst', () => {
    let now = 0;
    const budget = new ScanBudget(() => now, 1_000, 1_000);
    expect(budget.take(600)).toBe(true);
    expect(budget.take(600)).toBe(false);
    expect(budget.take(400)).toBe(true);
    expect(budget.take(1)).toBe(false);
    now = 500;
    expect(budget.take(500)).toBe(true);
    expect(budget.take(1)).toBe(false);
    now = 60_000;
    expect(budget.take(1_000)).toBe(true);
    expect(budget.take(1)).toBe(false);
  });

  it('by default saves up four seconds of its rate: a flood reads a quarter of what a burst may', () => {
    let now = 0;
    const budget = new ScanBudget(() => now);
    expect(SCAN_BURST_BYTES).toBe(4 * SCAN_BYTES_PER_SECOND);
    // A flood of 100 KB answers: the burst, then the rate.
    const read = (ms: number) => {
      let bytes = 0;
      for (const end = now + ms; now < end; now++) while (budget.take(100_000)) bytes += 100_000;
      return bytes;
    };
    expect(read(1)).toBe(Math.floor(SCAN_BURST_BYTES / 100_000) * 100_000);
    const steady = read(10_000) / 10;
    expect(Math.abs(steady - SCAN_BYTES_PER_SECOND)).toBeLessThan(100_000);
    now += 60_000;
    expect(read(1)).toBe(Math.floor(SCAN_BURST_BYTES / 100_000) * 100_000);
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

  it('gives with them the structure the whole body gives, reading it again only when not known', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }),
          fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 30 }), fc.integer())),
        ),
        fc.array(fc.nat({ max: 2 * SCAN_BYTES }), { maxLength: 3 }),
        fc.boolean(),
        (value, cuts, keysOnArrival) => {
          const whole = Buffer.from(JSON.stringify(value));
          const tap = tapOf(keysOnArrival);
          let at = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            const end = Math.max(at, Math.min(cut, whole.length));
            if (end === at) continue;
            tap.write(whole.subarray(at, end));
            at = end;
          }
          if (at < whole.length) tap.write(whole.subarray(at));
          tap.variantKeys();
          expect(tap.structureKeys()).toBe(structureFingerprint(whole));
          keyFingerprint(whole);
          expect(tap.structureKnown).toBe(KEY_SCAN.flat);
        },
      ),
    );
  });

  it('reads a body of several chunks whole, a long one, then a shorter one, then one past the reused buffer', () => {
    const body = (items: number) =>
      Buffer.from(JSON.stringify(Array.from({ length: items }, (_, i) => (i % 7 ? { id: i } : { id: i, tag: 'x' }))));
    // 100 KB as socket reads bring it, a short one after it (no byte of the first may show), 300 KB.
    for (const [whole, read] of [
      [body(9_000), 65_536],
      [body(20), 100],
      [body(27_000), 65_536],
    ] as const) {
      const tap = tapOf(false);
      for (let at = 0; at < whole.length; at += read) tap.write(whole.subarray(at, at + read));
      expect(tap.structureKeys()).toBe(structureFingerprint(whole));
      expect(tap.variantKeys()).toBe(whole.length > NOVELTY_BYTES ? null : keyFingerprint(whole));
    }
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
