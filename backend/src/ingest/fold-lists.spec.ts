import { LatencyHistogram, type WireHistogram } from '@spectator/shared';
import type { RuntimeMinute } from '../runtime/runtime.repository';
import { ConsumerFold, consumerRows, type QueuedConsumers } from '../consumers/consumers.service';
import { ExchangeFold } from '../evidence/evidence.service';
import type { EvidenceExchangeRow } from '../evidence/evidence.repository';
import { foldedMinutes, MinutesFold } from '../runtime/runtime.service';

/**
 * What a fold makes of its batches' exchanges, runtime minutes and consumer calls (issue 20): each
 * batch's list is read when its turn comes and added as it is read (a batch at a time, between
 * which the fold lets the event loop run), so a fold never holds every batch's list as objects at
 * once; what they add up to is what folding them all at once made.
 */
describe('a fold reading its batches', () => {
  const minute = (path: string, requests: number, ttfb: WireHistogram): RuntimeMinute => ({
    method: 'GET',
    path,
    minute: '2026-11-30T12:00:00.000Z',
    requests,
    serverErrors: requests > 2 ? 1 : 0,
    upstreamFailures: 0,
    clientLeft: 0,
    ttfb,
    ttlb: ttfb,
  });

  it('adds up the minutes of one key across batches and keeps a lone one as it came', () => {
    const lone = minute('/b', 1, { 3: 1 });
    const batches = [[minute('/a', 2, { 5: 2 }), lone], [minute('/a', 3, { 5: 1, 7: 2 })]];
    const merged = new LatencyHistogram();
    merged.addWire({ 5: 2 });
    merged.addWire({ 5: 1, 7: 2 });
    const fold = new MinutesFold();
    for (const batch of batches) fold.add(batch);
    const folded = fold.minutes();
    expect(folded).toEqual([{ ...minute('/a', 5, merged.toWire()), serverErrors: 1 }, minute('/b', 1, { 3: 1 })]);
    expect(folded[1]).toBe(lone);
    expect(foldedMinutes(batches.flat())).toEqual(folded);
  });

  it('adds up exchanges and consumer calls a batch at a time', () => {
    const exchange = (path: string, count: number, lastSeen: string, query: string[] | null): EvidenceExchangeRow =>
      ({
        method: 'GET',
        path,
        status: 200,
        req_ct: null,
        req_fp: null,
        res_ct: 'application/json',
        res_fp: 'f1',
        count,
        last_seen: lastSeen,
        query,
        req_h: null,
      }) as EvidenceExchangeRow;
    const batches = [
      { commit: 'c1', build: 'b1', exchanges: [exchange('/a', 1, '2026-11-30T12:00:01.000Z', ['q'])] },
      {
        commit: 'c2',
        build: 'b2',
        exchanges: [
          exchange('/a', 2, '2026-11-30T12:00:03.000Z', ['p']),
          exchange('/b', 1, '2026-11-30T12:00:02.000Z', null),
        ],
      },
    ];
    const exchanges = new ExchangeFold();
    for (const batch of batches) exchanges.add(batch);
    expect(exchanges.exchanges()).toEqual([
      { ...exchange('/a', 3, '2026-11-30T12:00:03.000Z', ['p', 'q']), commit: 'c1', build: 'b1' },
      { ...exchange('/b', 1, '2026-11-30T12:00:02.000Z', null), commit: 'c2', build: 'b2' },
    ]);

    const day = Date.parse('2026-11-30T12:00:00.000Z');
    const calls: QueuedConsumers[][] = [
      [{ method: 'GET', path: '/a', status: 200, calls: ['app', 2, day, 'web', 1, day + 5] }],
      [{ method: 'GET', path: '/a', status: 200, calls: ['app', 3, day + 9] }],
    ];
    const consumers = new ConsumerFold();
    for (const list of calls) consumers.add(list);
    expect(consumers.folded()).toEqual(consumerRows(calls.flat()));
    expect(consumers.folded()[0]?.consumers.get('app')).toEqual([5, day + 9]);
  });
});
