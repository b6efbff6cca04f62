import { LatencyHistogram, type WireHistogram } from '@spectator/shared';
import type { RuntimeMinute } from '../runtime/runtime.repository';
import { foldedMinutes } from '../runtime/runtime.service';
import { eachItem } from './evidence-folder';

/**
 * What a fold makes of its batches' runtime minutes and consumer calls (issue 20): each batch's
 * list is read when its turn comes and folded as it is read, so a fold never holds every batch's
 * list as objects at once; the folded minutes are what folding them all at once made.
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

  it('reads each batch list in its turn, after the items before it are folded', () => {
    const seen: string[] = [];
    const batch = (name: string, items: string[]): { list: string[] } => ({
      get list() {
        seen.push(`read ${name}`);
        return items;
      },
    });
    for (const item of eachItem([batch('a', ['a1', 'a2']), batch('b', ['b1'])], (b) => b.list)) seen.push(item);
    expect(seen).toEqual(['read a', 'a1', 'a2', 'read b', 'b1']);
  });

  it('adds up the minutes of one key across batches and keeps a lone one as it came', () => {
    const lone = minute('/b', 1, { 3: 1 });
    const batches = [[minute('/a', 2, { 5: 2 }), lone], [minute('/a', 3, { 5: 1, 7: 2 })]];
    const merged = new LatencyHistogram();
    merged.addWire({ 5: 2 });
    merged.addWire({ 5: 1, 7: 2 });
    const folded = foldedMinutes(eachItem(batches, (b) => b));
    expect(folded).toEqual([{ ...minute('/a', 5, merged.toWire()), serverErrors: 1 }, minute('/b', 1, { 3: 1 })]);
    expect(folded[1]).toBe(lone);
    expect(foldedMinutes(batches.flat())).toEqual(folded);
  });
});
