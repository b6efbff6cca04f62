import fc from 'fast-check';
import {
  byPathThenMethod,
  type EndpointKey,
  endpointKeyText,
  KeptViews,
  MAX_PATCHED_AGE_SECONDS,
  patchSortedList,
  type ViewBasis,
  type ViewUpkeep,
} from './view-cache';

const basis = (overrides: Partial<ViewBasis> = {}): ViewBasis => ({
  snapshot: '10:10:',
  takenAt: 1000,
  documentation: '1',
  rules: '[]',
  ...overrides,
});

/** An upkeep that counts and labels what it did: a full computation, or a patch of the kept value. */
function recording(): ViewUpkeep<string> & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    compute: () => {
      calls.push('compute');
      return Promise.resolve(`full${calls.length}`);
    },
    patch: (kept, changed) => {
      calls.push(`patch ${changed.map((c) => c.path).join(',')}`);
      return Promise.resolve(`${kept}+${changed.length}`);
    },
  };
}

describe('KeptViews', () => {
  const changed: EndpointKey[] = [{ method: 'GET', path: '/a' }];

  it('computes when nothing is kept, keeps when nothing changed, patches what changed', async () => {
    const views = new KeptViews<string>(4);
    const upkeep = recording();
    const first = basis();
    expect(await views.get('c', views.basisOf('c'), first, [], upkeep)).toBe('full1');
    expect(views.basisOf('c')).toBe(first);
    const second = basis({ snapshot: '12:12:' });
    expect(await views.get('c', views.basisOf('c'), second, [], upkeep)).toBe('full1');
    expect(await views.get('c', views.basisOf('c'), basis({ snapshot: '14:14:' }), changed, upkeep)).toBe('full1+1');
    expect(upkeep.calls).toEqual(['compute', 'patch /a']);
  });

  it('computes in full when the documentation, the rules or the age rule out a patch, or changes are unknown', async () => {
    for (const current of [
      basis({ documentation: '2' }),
      basis({ rules: '["GET /a"]' }),
      basis({ takenAt: 1000 + MAX_PATCHED_AGE_SECONDS }),
    ]) {
      const views = new KeptViews<string>(4);
      const upkeep = recording();
      await views.get('c', undefined, basis(), [], upkeep);
      await views.get('c', views.basisOf('c'), current, changed, upkeep);
      expect(upkeep.calls).toEqual(['compute', 'compute']);
    }
    const views = new KeptViews<string>(4);
    const upkeep = recording();
    await views.get('c', undefined, basis(), [], upkeep);
    await views.get('c', views.basisOf('c'), basis(), null, upkeep);
    expect(upkeep.calls).toEqual(['compute', 'compute']);
  });

  it('computes in full when the changes were read against a basis no longer kept (a concurrent request kept another)', async () => {
    const views = new KeptViews<string>(4);
    const upkeep = recording();
    await views.get('c', undefined, basis(), [], upkeep);
    const readAgainst = views.basisOf('c');
    await views.get('c', readAgainst, basis({ snapshot: '11:11:' }), [], upkeep);
    await views.get('c', readAgainst, basis({ snapshot: '12:12:' }), changed, upkeep);
    expect(upkeep.calls).toEqual(['compute', 'compute']);
  });

  it('keeps nothing when the computation fails, and forgets the least recently used capture', async () => {
    const views = new KeptViews<string>(2);
    const failing: ViewUpkeep<string> = {
      compute: () => Promise.reject(new Error('database down')),
      patch: () => Promise.reject(new Error('unused')),
    };
    await expect(views.get('one', undefined, basis(), [], failing)).rejects.toThrow('database down');
    expect(views.basisOf('one')).toBeUndefined();
    const upkeep = recording();
    await views.get('one', undefined, basis(), [], upkeep);
    await views.get('two', undefined, basis(), [], upkeep);
    await views.get('three', undefined, basis(), [], upkeep);
    expect(views.basisOf('one')).toBeUndefined();
    expect(views.basisOf('three')).toBeDefined();
  });
});

describe('patchSortedList', () => {
  const item = (method: string, path: string, n = 0): EndpointKey & { n: number } => ({ method, path, n });

  it('replaces, inserts and removes the changed endpoints in order, leaving the kept list as it was', () => {
    const kept = [item('GET', '/a'), item('POST', '/a'), item('GET', '/c'), item('GET', '/e')];
    const before = JSON.stringify(kept);
    const patched = patchSortedList(
      kept,
      [item('POST', '/a'), item('GET', '/b'), item('GET', '/e'), item('GET', '/z')],
      [item('GET', '/z', 1), item('POST', '/a', 1), item('GET', '/b', 1)],
    );
    expect(patched).toEqual([
      item('GET', '/a'),
      item('POST', '/a', 1),
      item('GET', '/b', 1),
      item('GET', '/c'),
      item('GET', '/z', 1),
    ]);
    expect(JSON.stringify(kept)).toBe(before);
  });

  it('equals sorting the kept entries that did not change with the fresh ones (property)', () => {
    const key = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT'),
      path: fc.constantFrom('/', '/a', '/a/b', '/B', '/b', '/é', '/z', '/10', '/9'),
    });
    const unique = (keys: EndpointKey[]): EndpointKey[] => [
      ...new Map(keys.map((k) => [endpointKeyText(k), k])).values(),
    ];
    fc.assert(
      fc.property(fc.array(key), fc.array(key), fc.array(fc.boolean()), (keptKeys, changedKeys, stillThere) => {
        const kept = unique(keptKeys)
          .map((k) => ({ ...k, n: 0 }))
          .sort(byPathThenMethod);
        const changed = unique(changedKeys);
        const fresh = changed.filter((_, i) => stillThere[i] ?? true).map((k) => ({ ...k, n: 1 }));
        const touched = new Set(changed.map(endpointKeyText));
        const expected = [...kept.filter((k) => !touched.has(endpointKeyText(k))), ...fresh].sort(byPathThenMethod);
        expect(patchSortedList(kept, changed, fresh)).toEqual(expected);
      }),
    );
  });
});
