import { useCallback, useSyncExternalStore } from 'react';
import { parseRoute, type Route } from '../lib/routes';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

const currentHash = (): string => window.location.hash;

/** The route of the current location hash, re-rendering on every hash change. */
export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, currentHash);
  return parseRoute(hash);
}

/** A hash split at its query: `#/p/demo/consumers?build=p-2` → `#/p/demo/consumers`, `build=p-2`. */
function splitHash(hash: string): { path: string; query: URLSearchParams } {
  const at = hash.indexOf('?');
  return at < 0
    ? { path: hash, query: new URLSearchParams() }
    : { path: hash.slice(0, at), query: new URLSearchParams(hash.slice(at + 1)) };
}

/**
 * The query of the location hash (what a view shows: `?environment=staging&window=7`), and a
 * setter that changes some of its keys (null removes one) in place, without a history entry per pick.
 */
export function useHashQuery(): [URLSearchParams, (changes: Record<string, string | null>) => void] {
  const hash = useSyncExternalStore(subscribe, currentHash);
  const set = useCallback((changes: Record<string, string | null>) => {
    const { path, query } = splitHash(window.location.hash);
    for (const [key, value] of Object.entries(changes))
      if (value === null) query.delete(key);
      else query.set(key, value);
    const text = query.toString();
    window.location.replace(`${path}${text === '' ? '' : `?${text}`}`);
  }, []);
  return [splitHash(hash).query, set];
}
