import fc from 'fast-check';
import { compareVersions, formatVersion, nextVersion, parseVersion, type Version } from '../src/version/version';

const breaking = { breaking: true };
const nonBreaking = { breaking: false };

describe('parseVersion', () => {
  it.each([
    ['1.0', { major: 1, minor: 0 }],
    ['1.1', { major: 1, minor: 1 }],
    ['1.5', { major: 1, minor: 5 }], // seed-spec §9 examples
    ['0.3', { major: 0, minor: 3 }],
    ['12.40', { major: 12, minor: 40 }],
  ])('parses %s', (text, expected) => {
    expect(parseVersion(text)).toEqual(expected);
  });

  it.each([
    '1',
    'v1.0',
    '1.0.0',
    '01.0',
    '1.01',
    ' 1.0',
    '1.0 ',
    '1.',
    '.1',
    '-1.0',
    '1.-1',
    'a.b',
    '',
    '1e3.0',
    '99999999999999999999.0',
  ])('rejects %j, naming it and the expected form', (text) => {
    expect(() => parseVersion(text)).toThrow(`invalid version ${JSON.stringify(text)}: expected <major>.<minor>`);
  });
});

describe('formatVersion', () => {
  it.each([
    [{ major: 1, minor: 0 }, '1.0'],
    [{ major: 2, minor: 13 }, '2.13'],
  ])('formats %j as %s', (version, text) => {
    expect(formatVersion(version)).toBe(text);
  });

  it.each([
    { major: -1, minor: 0 },
    { major: 1.5, minor: 0 },
    { major: 1, minor: Number.NaN },
  ])('rejects %j', (version) => {
    expect(() => formatVersion(version)).toThrow('major and minor must be non-negative integers');
  });
});

describe('compareVersions', () => {
  it.each([
    ['1.0', '1.1', -1],
    ['1.1', '1.0', 1],
    ['1.9', '1.10', -1], // numeric, not textual
    ['2.0', '1.99', 1],
    ['1.5', '1.5', 0],
  ])('%s vs %s → %i', (a, b, sign) => {
    expect(compareVersions(parseVersion(a), parseVersion(b))).toBe(sign);
  });

  it('sorts versions in numeric order', () => {
    const sorted = ['2.0', '1.10', '1.2', '1.0'].map(parseVersion).sort(compareVersions).map(formatVersion);
    expect(sorted).toEqual(['1.0', '1.2', '1.10', '2.0']);
  });
});

describe('nextVersion', () => {
  it.each<[string | null, Array<{ breaking: boolean }>, string]>([
    [null, [], '1.0'], // first implementation of a new endpoint is 1.0 (seed-spec §3)
    [null, [breaking], '1.0'],
    ['1.0', [nonBreaking], '1.1'], // small non-breaking change → next minor (seed-spec §3)
    ['1.4', [nonBreaking, nonBreaking], '1.5'],
    ['1.4', [nonBreaking, breaking], '2.0'], // any breaking change → next major
    ['2.3', [breaking], '3.0'],
    ['1.0', [], '1.1'], // no shape change (e.g. a new description) is still a new version
  ])('from %s with %j → %s', (current, changes, expected) => {
    expect(formatVersion(nextVersion(current === null ? null : parseVersion(current), changes))).toBe(expected);
  });

  it('rejects an invalid current version', () => {
    expect(() => nextVersion({ major: -1, minor: 0 }, [])).toThrow('invalid version');
  });
});

describe('version laws', () => {
  const version = fc.record({ major: fc.nat({ max: 1e6 }), minor: fc.nat({ max: 1e6 }) });
  const changes = fc.array(fc.record({ breaking: fc.boolean() }), { maxLength: 5 });

  it('parse(format(v)) is v', () => {
    fc.assert(fc.property(version, (v) => expect(parseVersion(formatVersion(v))).toEqual(v)));
  });

  it('nextVersion is strictly greater than the current version', () => {
    fc.assert(
      fc.property(version, changes, (v: Version, c) => {
        expect(compareVersions(nextVersion(v, c), v)).toBe(1);
      }),
    );
  });

  it('compareVersions is antisymmetric', () => {
    fc.assert(fc.property(version, version, (a, b) => expect(compareVersions(a, b)).toBe(-compareVersions(b, a) || 0)));
  });
});
