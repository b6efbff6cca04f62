import { PARTITION_NAME, partitionOf, partitionsCovering } from './partitions';

const at = (iso: string) => new Date(iso);
const bounds = (p: { name: string; from: Date; to: Date }) => ({
  name: p.name,
  from: p.from.toISOString(),
  to: p.to.toISOString(),
});

describe('runtime partitions', () => {
  it('hold a day (UTC) of minute rows, a week from Monday of hour rows, a month of day rows', () => {
    // Saturday 28 November 2026, late in the day.
    const saturday = at('2026-11-28T23:59:00.000Z');
    expect(bounds(partitionOf('minute', saturday))).toEqual({
      name: 'runtime_buckets_minute_20261128',
      from: '2026-11-28T00:00:00.000Z',
      to: '2026-11-29T00:00:00.000Z',
    });
    expect(bounds(partitionOf('hour', saturday))).toEqual({
      name: 'runtime_buckets_hour_20261123',
      from: '2026-11-23T00:00:00.000Z',
      to: '2026-11-30T00:00:00.000Z',
    });
    expect(bounds(partitionOf('day', saturday))).toEqual({
      name: 'runtime_buckets_day_20261101',
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-12-01T00:00:00.000Z',
    });
    // A Monday's first hour starts its week; December ends a year.
    expect(partitionOf('hour', at('2026-11-30T00:00:00.000Z')).name).toBe('runtime_buckets_hour_20261130');
    expect(bounds(partitionOf('day', at('2026-12-31T00:00:00.000Z')))).toMatchObject({
      to: '2027-01-01T00:00:00.000Z',
    });
    // Before 1970 too (a Thursday), as PostgreSQL's date_trunc('week') has it.
    expect(partitionOf('hour', at('1970-01-01T12:00:00.000Z')).name).toBe('runtime_buckets_hour_19691229');
  });

  it('cover a window with consecutive partitions, both ends included', () => {
    const covering = partitionsCovering('minute', at('2026-11-28T10:00:00.000Z'), at('2026-11-30T00:00:00.000Z'));
    expect(covering.map((p) => p.name)).toEqual([
      'runtime_buckets_minute_20261128',
      'runtime_buckets_minute_20261129',
      'runtime_buckets_minute_20261130',
    ]);
    const weeks = partitionsCovering('hour', at('2026-11-01T00:00:00.000Z'), at('2026-11-30T00:00:00.000Z'));
    for (let i = 1; i < weeks.length; i++) expect(weeks[i]!.from).toEqual(weeks[i - 1]!.to);
    expect(weeks.map((p) => p.name)).toEqual([
      'runtime_buckets_hour_20261026',
      'runtime_buckets_hour_20261102',
      'runtime_buckets_hour_20261109',
      'runtime_buckets_hour_20261116',
      'runtime_buckets_hour_20261123',
      'runtime_buckets_hour_20261130',
    ]);
  });

  it('name only what may go into SQL unquoted', () => {
    expect(PARTITION_NAME.test('runtime_buckets_day_20261101')).toBe(true);
    expect(PARTITION_NAME.test('runtime_buckets_minute_default')).toBe(true);
    expect(PARTITION_NAME.test('runtime_buckets_minute_2026112"; DROP TABLE x; --')).toBe(false);
    expect(PARTITION_NAME.test('runtime_buckets')).toBe(false);
  });
});
