import {
  changePlaceLabel,
  environmentLabel,
  formatMs,
  formatPercent,
  plural,
  shortCommit,
  slugFor,
  splitTimes,
  timeAgo,
} from './format';

describe('format', () => {
  const now = Date.parse('2026-01-02T12:00:00Z');
  it.each([
    ['2026-01-02T12:00:03Z', 'just now'],
    ['2026-01-02T11:59:30Z', '30 s ago'],
    ['2026-01-02T11:55:00Z', '5 min ago'],
    ['2026-01-02T09:00:00Z', '3 h ago'],
    ['2025-12-30T12:00:00Z', '3 d ago'],
  ])('timeAgo(%s) is %s', (iso, text) => {
    expect(timeAgo(iso, now)).toBe(text);
  });

  it('finds the ISO 8601 times in a sentence, the text around them kept', () => {
    expect(
      splitTimes('last seen in production 2026-11-01T10:00:00.120Z, until 2026-11-28T10:12:03Z, and 2026-11-28'),
    ).toEqual({
      texts: ['last seen in production ', ', until ', ', and 2026-11-28'],
      times: ['2026-11-01T10:00:00.120Z', '2026-11-28T10:12:03Z'],
    });
    expect(splitTimes('never seen in staging')).toEqual({ texts: ['never seen in staging'], times: [] });
    expect(splitTimes('2026-11-28T10:12:03+01:00')).toEqual({ texts: ['', ''], times: ['2026-11-28T10:12:03+01:00'] });
  });

  it('says never for no time and keeps an unparsable one as is', () => {
    expect(timeAgo(null, now)).toBe('never');
    expect(timeAgo('yesterday', now)).toBe('yesterday');
  });

  it.each([
    [{ kind: 'ci', pullRequest: '42', build: null }, 'CI · PR #42'],
    [{ kind: 'ci', pullRequest: '#7', build: 'b' }, 'CI · PR #7'],
    [{ kind: 'staging', pullRequest: null, build: 's-1' }, 'Staging · build s-1'],
    [{ kind: 'production', pullRequest: null, build: 'p-2' }, 'Production · build p-2'],
    [{ kind: 'local', name: 'local', pullRequest: null, build: null }, 'Local'],
    [{ kind: 'local', name: 'laptop', pullRequest: null, build: null }, 'Local · laptop'],
  ])('environmentLabel(%j) is %s', (where, label) => {
    expect(environmentLabel(where)).toBe(label);
  });

  it('shortens commits and pluralises counts', () => {
    expect(shortCommit('0123456789abcdef')).toBe('0123456');
    expect(shortCommit(null)).toBe('—');
    expect(plural(1, 'diff')).toBe('1 diff');
    expect(plural(4, 'diff')).toBe('4 diffs');
  });
});

describe('changePlaceLabel', () => {
  it.each([
    ['request', undefined, 'Request body'],
    ['response', 201, '201 response'],
    ['query', undefined, 'Query parameter'],
    ['header', undefined, 'Request header'],
  ] as const)('%s %s → %s', (place, status, label) => {
    expect(changePlaceLabel(place, status)).toBe(label);
  });
});

describe('slugFor', () => {
  it.each([
    ['Posts API', 'posts-api'],
    ['  Café — Orders v2 ', 'cafe-orders-v2'],
    ['---', ''],
    ['ÄÖÜ', 'aou'],
    ['a'.repeat(62) + ' b', 'a'.repeat(62)],
  ])('slugFor(%j) is %j', (name, slug) => {
    expect(slugFor(name)).toBe(slug);
    expect(slug === '' || /^[a-z0-9][a-z0-9-]{0,62}$/.test(slug)).toBe(true);
  });
});

describe('formatMs and formatPercent', () => {
  it('round to what a cell has room for', () => {
    expect([0.4213, 12.34, 130.6, 1534].map(formatMs)).toEqual(['0.42 ms', '12 ms', '131 ms', '1.5 s']);
    expect([0, 0.0025, 0.031, 0.3, 1].map(formatPercent)).toEqual(['0%', '0.25%', '3.1%', '30%', '100%']);
  });
});
