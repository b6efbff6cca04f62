import {
  ALL_CALLS,
  MAX_CONSUMERS_PER_KEY,
  OTHER_CONSUMERS,
  rowChanges,
  type StoredConsumers,
} from './consumers.repository';
import { consumerRows } from './consumers.service';

const A = 'aaaaaaaaaaaaaaaa';
const B = 'bbbbbbbbbbbbbbbb';
const pseudonym = (n: number): string => n.toString(16).padStart(16, '0');

describe('a fold of consumer calls', () => {
  it('makes one row per endpoint, status and day, each consumer added up with its latest call', () => {
    const day = (consumer: string, status: number, calls: number, lastCall: string) => ({
      method: 'GET',
      path: '/users',
      status,
      consumer,
      day: lastCall.slice(0, 10),
      calls,
      lastCall,
    });
    const rows = consumerRows([
      day(ALL_CALLS, 200, 3, '2026-11-20T10:00:00.000Z'),
      day(A, 200, 2, '2026-11-20T09:00:00.000Z'),
      day(A, 200, 1, '2026-11-20T11:00:00.000Z'),
      day(B, 404, 1, '2026-11-20T08:00:00.000Z'),
      day(A, 200, 4, '2026-11-21T01:00:00.000Z'),
    ]);
    expect(rows.map((r) => [r.status, r.day, Object.fromEntries(r.consumers)])).toEqual([
      [
        200,
        '2026-11-20',
        { [ALL_CALLS]: [3, Date.parse('2026-11-20T10:00:00Z')], [A]: [3, Date.parse('2026-11-20T11:00:00Z')] },
      ],
      [404, '2026-11-20', { [B]: [1, Date.parse('2026-11-20T08:00:00Z')] }],
      [200, '2026-11-21', { [A]: [4, Date.parse('2026-11-21T01:00:00Z')] }],
    ]);
  });

  it('changes only the consumers it adds to, from their stored totals', () => {
    const stored: StoredConsumers = { [ALL_CALLS]: [10, 500], [A]: [6, 400], [B]: [4, 500] };
    expect(
      rowChanges(
        stored,
        new Map([
          [ALL_CALLS, [2, 300]],
          [A, [2, 700]],
        ]),
      ),
    ).toEqual({
      [ALL_CALLS]: [12, 500],
      [A]: [8, 700],
    });
    expect(rowChanges(undefined, new Map([[B, [1, 100]]]))).toEqual({ [B]: [1, 100] });
  });

  it('names new consumers while the row has room, and counts the others under the others', () => {
    const full: StoredConsumers = { [ALL_CALLS]: [5000, 1], [OTHER_CONSUMERS]: [1, 1] };
    for (let i = 0; i < MAX_CONSUMERS_PER_KEY - 1; i++) full[pseudonym(i)] = [1, 1];
    const changes = rowChanges(
      full,
      new Map([
        [pseudonym(5), [1, 9]],
        [A, [2, 9]],
        [B, [3, 9]],
        [OTHER_CONSUMERS, [1, 2]],
        [ALL_CALLS, [6, 9]],
      ]),
    );
    // A takes the last place; B's calls go to the others, as do the agent's own overflow.
    expect(changes).toEqual({
      [pseudonym(5)]: [2, 9],
      [A]: [2, 9],
      [OTHER_CONSUMERS]: [5, 9],
      [ALL_CALLS]: [5006, 9],
    });
  });
});
