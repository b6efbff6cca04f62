import { StampedViewCache } from './view-cache';

describe('StampedViewCache', () => {
  it('computes once per stamp and again when the stamp changes', async () => {
    const cache = new StampedViewCache<number>(4);
    let computed = 0;
    const compute = (): Promise<number> => Promise.resolve(++computed);
    expect(await cache.get('capture-1', 'a', compute)).toBe(1);
    expect(await cache.get('capture-1', 'a', compute)).toBe(1);
    expect(await cache.get('capture-1', 'b', compute)).toBe(2);
    // Back to an earlier stamp: only the latest entry per key is kept, so it is computed again.
    expect(await cache.get('capture-1', 'a', compute)).toBe(3);
    expect(await cache.get('capture-2', 'a', compute)).toBe(4);
    expect(computed).toBe(4);
  });

  it('forgets the least recently used key beyond its capacity', async () => {
    const cache = new StampedViewCache<string>(2);
    const compute = (value: string) => (): Promise<string> => Promise.resolve(value);
    await cache.get('one', 's', compute('first one'));
    await cache.get('two', 's', compute('first two'));
    await cache.get('one', 's', compute('unused'));
    await cache.get('three', 's', compute('first three'));
    expect(await cache.get('one', 's', compute('second one'))).toBe('first one');
    expect(await cache.get('two', 's', compute('second two'))).toBe('second two');
  });

  it('keeps nothing when the computation fails', async () => {
    const cache = new StampedViewCache<number>(2);
    await expect(cache.get('capture', 's', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await cache.get('capture', 's', () => Promise.resolve(7))).toBe(7);
  });
});
