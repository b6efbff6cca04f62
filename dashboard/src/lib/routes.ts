import { ENVIRONMENT_KINDS, type EnvironmentKind } from '@spectator/shared';

/** Every screen of the dashboard, as parsed from the location hash (hash routing: no router dependency). */
export type Route =
  | { page: 'home' }
  | { page: 'signin'; token?: string; project?: string }
  | { page: 'captures'; project: string; captureId?: string }
  | { page: 'undocumented'; project: string; captureId: string; method: string; path: string }
  | { page: 'diff'; project: string; captureId: string; method: string; path: string }
  | { page: 'commit'; project: string; captureId: string }
  | { page: 'docs'; project: string; endpointId?: string }
  | { page: 'versions'; project: string; kind?: EnvironmentKind }
  | { page: 'proposals'; project: string; proposalId?: string }
  | { page: 'settings'; project: string }
  | { page: 'audit'; project: string }
  | { page: 'consumers'; project: string; endpointId?: string }
  | { page: 'usage'; project: string }
  | { page: 'not-found'; hash: string };

export type ProjectRoute = Extract<Route, { project: string }>;

function isEnvironmentKind(value: string | null): value is EnvironmentKind {
  return value !== null && (ENVIRONMENT_KINDS as readonly string[]).includes(value);
}

/** Reads a location hash such as `#/p/demo/captures/123/undocumented?method=POST&path=%2Fposts`. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const [pathPart = '', queryPart = ''] = raw.split('?', 2);
  const query = new URLSearchParams(queryPart);
  const segments = pathPart
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    });
  const optional = (key: string) => query.get(key) ?? undefined;

  if (segments.length === 0) return { page: 'home' };
  if (segments[0] === 'signin' && segments.length === 1) {
    const token = optional('token');
    const project = optional('project');
    return { page: 'signin', ...(token ? { token } : {}), ...(project ? { project } : {}) };
  }
  if (segments[0] === 'p' && segments[1]) {
    const project = segments[1];
    const [section, id, sub] = segments.slice(2);
    const method = query.get('method');
    const path = query.get('path');
    switch (section) {
      case undefined:
      case 'captures':
        if (!id) return { page: 'captures', project };
        if (!sub) return { page: 'captures', project, captureId: id };
        if (sub === 'commit') return { page: 'commit', project, captureId: id };
        if ((sub === 'undocumented' || sub === 'diff') && method && path)
          return { page: sub, project, captureId: id, method, path };
        break;
      case 'docs':
        return id ? { page: 'docs', project, endpointId: id } : { page: 'docs', project };
      case 'versions': {
        const kind = query.get('kind');
        return isEnvironmentKind(kind) ? { page: 'versions', project, kind } : { page: 'versions', project };
      }
      case 'proposals':
        return id ? { page: 'proposals', project, proposalId: id } : { page: 'proposals', project };
      case 'settings':
        return { page: 'settings', project };
      case 'audit':
        return { page: 'audit', project };
      case 'consumers':
        return id ? { page: 'consumers', project, endpointId: id } : { page: 'consumers', project };
      case 'usage':
        return { page: 'usage', project };
    }
  }
  return { page: 'not-found', hash: raw };
}

/** The hash (with `#`) that shows a route; `parseRoute(routeHref(r))` gives `r` back. */
export function routeHref(route: Route): string {
  const enc = encodeURIComponent;
  const withQuery = (path: string, query: Record<string, string | undefined>) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, value);
    const text = params.toString();
    return `#${path}${text ? `?${text}` : ''}`;
  };
  switch (route.page) {
    case 'home':
      return '#/';
    case 'signin':
      return withQuery('/signin', { token: route.token, project: route.project });
    case 'not-found':
      return `#${route.hash}`;
  }
  const base = `/p/${enc(route.project)}`;
  switch (route.page) {
    case 'captures':
      return `#${base}/captures${route.captureId ? `/${enc(route.captureId)}` : ''}`;
    case 'undocumented':
    case 'diff':
      return withQuery(`${base}/captures/${enc(route.captureId)}/${route.page}`, {
        method: route.method,
        path: route.path,
      });
    case 'commit':
      return `#${base}/captures/${enc(route.captureId)}/commit`;
    case 'docs':
      return `#${base}/docs${route.endpointId ? `/${enc(route.endpointId)}` : ''}`;
    case 'versions':
      return withQuery(`${base}/versions`, { kind: route.kind });
    case 'proposals':
      return `#${base}/proposals${route.proposalId ? `/${enc(route.proposalId)}` : ''}`;
    case 'settings':
      return `#${base}/settings`;
    case 'audit':
      return `#${base}/audit`;
    case 'consumers':
      return `#${base}/consumers${route.endpointId ? `/${enc(route.endpointId)}` : ''}`;
    case 'usage':
      return `#${base}/usage`;
  }
}

/** Moves to a route; `replace` keeps the browser history free of redirects. */
export function navigate(route: Route, options: { replace?: boolean } = {}): void {
  const href = routeHref(route);
  if (options.replace) window.location.replace(href);
  else window.location.hash = href;
}

/**
 * A view's redirect from `from` (the route it was rendered for) to `to`, in place, made only while
 * the address still shows `from`. A view's effect runs after its render, and the address can move
 * in between (a click, a link, a test's `page.goto`): that move is kept, not undone.
 */
export function redirect(from: Route, to: Route): void {
  if (routeHref(parseRoute(window.location.hash)) === routeHref(from)) navigate(to, { replace: true });
}
