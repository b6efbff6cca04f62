import { parseRoute, redirect, routeHref, type Route } from './routes';

describe('routes', () => {
  it.each<Route>([
    { page: 'home' },
    { page: 'signin' },
    { page: 'signin', token: 'sp_abc/+=', project: 'demo' },
    { page: 'captures', project: 'demo' },
    { page: 'captures', project: 'my project', captureId: '7f0c' },
    { page: 'undocumented', project: 'demo', captureId: 'c1', method: 'POST', path: '/posts/{postId}' },
    { page: 'diff', project: 'demo', captureId: 'c1', method: 'GET', path: '/posts?x' },
    { page: 'commit', project: 'demo', captureId: 'c1' },
    { page: 'docs', project: 'demo' },
    { page: 'docs', project: 'demo', endpointId: 'e1' },
    { page: 'versions', project: 'demo' },
    { page: 'versions', project: 'demo', kind: 'production' },
    { page: 'proposals', project: 'demo', proposalId: 'p9' },
    { page: 'settings', project: 'demo' },
    { page: 'audit', project: 'demo' },
    { page: 'consumers', project: 'demo' },
    { page: 'consumers', project: 'demo', endpointId: 'e-1' },
    { page: 'usage', project: 'demo' },
  ])('%j survives a round trip through the hash', (route) => {
    expect(parseRoute(routeHref(route))).toEqual(route);
  });

  it('reads the one-click demo link', () => {
    expect(parseRoute('#/signin?token=t0k&project=demo')).toEqual({ page: 'signin', token: 't0k', project: 'demo' });
  });

  it.each(['#/nowhere', '#/p/demo/captures/c1/undocumented', '#/p/demo/unknown'])(
    '%s is not found rather than a crash',
    (hash) => {
      expect(parseRoute(hash).page).toBe('not-found');
    },
  );

  it('drops an unknown environment kind from the versions filter', () => {
    expect(parseRoute('#/p/demo/versions?kind=moon')).toEqual({ page: 'versions', project: 'demo' });
  });

  it('survives a malformed percent escape', () => {
    expect(parseRoute('#/p/%E0%A4%A/settings')).toEqual({ page: 'settings', project: '%E0%A4%A' });
  });

  describe('redirect', () => {
    /** A stand-in for the browser's location at `hash`; returns where `replace` was asked to go. */
    function at(hash: string): string[] {
      const replaced: string[] = [];
      Object.assign(globalThis, { window: { location: { hash, replace: (href: string) => replaced.push(href) } } });
      return replaced;
    }
    afterEach(() => {
      delete (globalThis as { window?: unknown }).window;
    });

    it.each(['#/p/demo/captures', '#/p/demo', '#/p/demo/'])('goes on from the route it was made for (%s)', (hash) => {
      const replaced = at(hash);
      redirect({ page: 'captures', project: 'demo' }, { page: 'captures', project: 'demo', captureId: 'c2' });
      expect(replaced).toEqual(['#/p/demo/captures/c2']);
    });

    it('leaves an address that moved on since (to the Versions page) as it is', () => {
      const replaced = at('#/p/demo/versions?kind=production');
      redirect({ page: 'captures', project: 'demo' }, { page: 'captures', project: 'demo', captureId: 'c2' });
      expect(replaced).toEqual([]);
    });

    it('goes from home only while the address is home', () => {
      const home = at('');
      redirect({ page: 'home' }, { page: 'signin' });
      expect(home).toEqual(['#/signin']);
      const moved = at('#/p/demo/docs');
      redirect({ page: 'home' }, { page: 'signin' });
      expect(moved).toEqual([]);
    });
  });
});
