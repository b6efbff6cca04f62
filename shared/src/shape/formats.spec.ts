import fc from 'fast-check';
import { detectStringFormat } from './formats';

describe('detectStringFormat', () => {
  it.each<[string, string | null]>([
    ['3f2504e0-4f89-41d3-9a0c-0305e82c3301', 'uuid'],
    ['3F2504E0-4F89-41D3-9A0C-0305E82C3301', 'uuid'],
    ['3f2504e0-4f89-41d3-9a0c-0305e82c330g', null],
    ['3f2504e0-4f89-41d3-9a0c0-305e82c3301', null],
    ['2026-11-22', 'date'],
    ['2026-02-31', 'date'], // a hint of the form, not a calendar check
    ['2026-00-22', null],
    ['2026-11-32', null],
    ['2026/11/22', null],
    ['20261-1-22', null],
    ['2026-11-22T00:25:00Z', 'date-time'],
    ['2026-11-22t00:25:00z', 'date-time'],
    ['2026-11-22T23:59:60Z', 'date-time'],
    ['2026-11-22T00:25:00.123456Z', 'date-time'],
    ['2026-11-22T00:25:00+05:30', 'date-time'],
    ['2026-11-22T00:25:00.5-08:00', 'date-time'],
    ['2026-11-22T24:00:00Z', null],
    ['2026-11-22T00:60:00Z', null],
    ['2026-11-22T00:25:00', null],
    ['2026-11-22T00:25:00.Z', null],
    ['2026-11-22T00:25:00+24:00', null],
    ['2026-11-22T00:25:00+05:30x', null],
    ['2026-11-22 00:25:00Z', null],
    ['2026-11-22T00:25Z', null],
    ['ann@example.com', 'email'],
    ['first.last+tag@mail.example.co.uk', 'email'],
    ['@example.com', null],
    ['ann@example', null],
    ['ann@@example.com', null],
    ['ann smith@example.com', null],
    ['ann@exa mple.com', null],
    ['ann@example..com', null],
    ['ann@.example.com', null],
    ['ann@example.com.', null],
    ['ann\u00a0b@example.com', null],
    ['ann@example.com\u2028', null],
    ['https://example.com/posts/1?x=y', 'uri'],
    ['postgres://db:5432/app', 'uri'],
    ['https://', null],
    ['://example.com', null],
    ['see https://example.com', null],
    ['https://example.com/a b', null],
    ['https://example.com/\u3000', null],
    ['1http://example.com', null],
    ['web+cal://example.com', 'uri'],
    ['ht_tp://example.com', null],
    ['https://a-bcdefg.io/abc%F0%90%80%80aa', 'uri'], // 36 long with a dash at 8, like a uuid
    ['2026-11-22@example.com', 'email'], // starts like a date
    ['hello', null],
    ['', null],
    [`https://example.com/${'a'.repeat(3000)}`, null],
  ])('%s → %s', (text, format) => {
    expect(detectStringFormat(text)).toBe(format);
  });

  // The hand-written checks must agree with the patterns they replace.
  const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
  const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s]+$/;
  it('agrees with the e-mail and URI patterns on generated strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.emailAddress(),
          fc.webUrl(),
          fc.string({
            unit: fc.constantFrom('a', 'Z', '1', '@', '.', ':', '/', ' ', '\u00a0', '+', '-'),
            maxLength: 14,
          }),
        ),
        (text) => {
          const format = detectStringFormat(text);
          const expected =
            text.length < 6 || text.length > 254
              ? null
              : URI.test(text)
                ? 'uri'
                : EMAIL.test(text) && !text.includes('://')
                  ? 'email'
                  : null;
          if (format === 'uri' || format === 'email' || format === null) expect(format).toBe(expected);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
