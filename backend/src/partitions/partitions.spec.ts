import {
  OBSERVATIONS,
  PARTITION_NAME,
  partitionOf,
  partitionsAhead,
  partitionsCovering,
  RUNTIME_ROWS,
} from './partitions';

const at = (iso: string) => new Date(iso);
const bounds = (p: { name: string; from: Date; to: Date }) => ({
  name: p.name,
  from: p.from.toISOString(),
  to: p.to.toISOString(),
});

describe('partitions by time', () => {
  it('hold a day (UTC) of minute rows, a week from Monday of hour rows and of observations, a month of day rows', () => {
    // Saturday 28 November 2026, late in the day.
    const saturday = at('2026-11-28T23:59:00.000Z');
    expect(bounds(partitionOf(RUNTIME_ROWS.minute, saturday))).toEqual({
      name: 'runtime_buckets_minute_20261128',
      from: '2026-11-28T00:00:00.000Z',
      to: '2026-11-29T00:00:00.000Z',
    });
    expect(bounds(partitionOf(RUNTIME_ROWS.hour, saturday))).toEqual({
      name: 'runtime_buckets_hour_20261123',
      from: '2026-11-23T00:00:00.000Z',
      to: '2026-11-30T00:00:00.000Z',
    });
    expect(bounds(partitionOf(RUNTIME_ROWS.day, saturday))).toEqual({
      name: 'runtime_buckets_day_20261101',
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-12-01T00:00:00.000Z',
    });
    expect(bounds(partitionOf(OBSERVATIONS, saturday))).toEqual({
      name: 'observations_20261123',
      from: '2026-11-23T00:00:00.000Z',
      to: '2026-11-30T00:00:00.000Z',
    });
    // A Monday's first hour starts its week; December ends a year.
    expect(partitionOf(RUNTIME_ROWS.hour, at('2026-11-30T00:00:00.000Z')).name).toBe('runtime_buckets_hour_20261130');
    expect(bounds(partitionOf(RUNTIME_ROWS.day, at('2026-12-31T00:00:00.000Z')))).toMatchObject({
      to: '2027-01-01T00:00:00.000Z',
    });
    // Before 1970 too (a Thursday), as PostgreSQL's date_trunc('week') has it.
    expect(partitionOf(RUNTIME_ROWS.hour, at('1970-01-01T12:00:00.000Z')).name).toBe('runtime_buckets_hour_19691229');
  });

  it('cover a window with consecutive partitions, both ends included', () => {
    const covering = partitionsCovering(
      RUNTIME_ROWS.minute,
      at('2026-11-28T10:00:00.000Z'),
      at('2026-11-30T00:00:00.000Z'),
    );
    expect(covering.map((p) => p.name)).toEqual([
      'runtime_buckets_minute_20261128',
      'runtime_buckets_minute_20261129',
      'runtime_buckets_minute_20261130',
    ]);
    const weeks = partitionsCovering(RUNTIME_ROWS.hour, at('2026-11-01T00:00:00.000Z'), at('2026-11-30T00:00:00.000Z'));
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

  it('are made for the current period and the next two', () => {
    const now = at('2026-12-31T23:00:00.000Z');
    expect(partitionsAhead(RUNTIME_ROWS.minute, now).map((p) => p.name)).toEqual([
      'runtime_buckets_minute_20261231',
      'runtime_buckets_minute_20270101',
      'runtime_buckets_minute_20270102',
    ]);
    expect(partitionsAhead(OBSERVATIONS, now).map((p) => p.name)).toEqual([
      'observations_20261228',
      'observations_20270104',
      'observations_20270111',
    ]);
    expect(partitionsAhead(RUNTIME_ROWS.day, now).map((p) => p.name)).toEqual([
      'runtime_buckets_day_20261201',
      'runtime_buckets_day_20270101',
      'runtime_buckets_day_20270201',
    ]);
  });

  it('name only what may go into SQL unquoted', () => {
    expect(PARTITION_NAME.test('observations_20261123')).toBe(true);
    expect(PARTITION_NAME.test('observations_default')).toBe(true);
    expect(PARTITION_NAME.test('observations')).toBe(false);
    expect(PARTITION_NAME.test('runtime_buckets_day_20261101')).toBe(true);
    expect(PARTITION_NAME.test('runtime_buckets_minute_default')).toBe(true);
    expect(PARTITION_NAME.test('runtime_buckets_minute_2026112"; DROP TABLE x; --')).toBe(false);
    expect(PARTITION_NAME.test('runtime_buckets')).toBe(false);
  });
});
