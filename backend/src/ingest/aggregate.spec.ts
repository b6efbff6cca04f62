import type { WireObservation } from '@spectator/shared';
import { environmentRowOf } from '../evidence/environment-row';
import { aggregateObservations, environmentName } from './ingest.service';

const base: WireObservation = {
  method: 'GET',
  path: '/posts',
  status: 200,
  query: ['a'],
  requestHeaders: [],
  responseHeaders: ['content-type'],
  request: null,
  response: { contentType: 'application/json', shape: 'fp1' },
  count: 1,
  firstSeen: '2026-01-01T00:00:05.000Z',
  lastSeen: '2026-01-01T00:00:06.000Z',
};

describe('aggregateObservations', () => {
  it('folds rows with the same key so one upsert never touches a row twice', () => {
    const rows = aggregateObservations([
      base,
      { ...base, count: 2, query: ['b'], firstSeen: '2026-01-01T00:00:01.000Z', lastSeen: '2026-01-01T00:00:09.000Z' },
      { ...base, status: 404 },
    ]);
    expect(rows).toHaveLength(2);
    expect(rows.find((row) => row.status === 200)).toMatchObject({
      count: 3,
      query: ['a', 'b'],
      first_seen: '2026-01-01T00:00:01.000Z',
      last_seen: '2026-01-01T00:00:09.000Z',
    });
  });

  it('keeps "no body" apart from a body and sorts rows by key (one lock order for concurrent batches)', () => {
    const rows = aggregateObservations([{ ...base, path: '/z' }, { ...base, response: null }, base]);
    expect(rows.map((row) => `${row.path} ${row.res_fp}`)).toEqual(['/posts null', '/posts fp1', '/z fp1']);
  });
});

describe('environmentName', () => {
  it.each([
    [{ kind: 'ci' as const, pullRequest: '42' }, 'PR #42'],
    [{ kind: 'ci' as const }, 'ci'],
    [{ kind: 'production' as const, build: 'b7' }, 'production'],
  ])('%j → %s', (environment, name) => {
    expect(environmentName(environment)).toBe(name);
  });

  it("names a pull request's CI capture as its matrix row, which runtime queries look up", () => {
    const environment = { kind: 'ci' as const, pullRequest: '42', build: '7' };
    expect(environmentName(environment)).toBe(environmentRowOf(environment)?.name);
  });
});
