import { useCallback, useEffect, useRef, useState } from 'react';
import type { DashboardSignal } from '../lib/events';
import { useDashboardEvent } from './events';

export type Resource<T> =
  | { state: 'loading'; reload: () => void }
  | { state: 'error'; error: Error; reload: () => void }
  | { state: 'ready'; data: T; refreshing: boolean; reload: () => void };

/**
 * Loads data for a view and reloads it when `deps` change, when `reload()` is called, or when a
 * live event for which `reloadOn` answers true arrives (and after an events reconnect). Data that
 * is on screen stays there while it refreshes; a late answer for old `deps` is dropped.
 */
export function useResource<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  reloadOn?: (signal: DashboardSignal) => boolean,
): Resource<T> {
  const [state, setState] = useState<
    { state: 'loading' } | { state: 'error'; error: Error } | { state: 'ready'; data: T; refreshing: boolean }
  >({ state: 'loading' });
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const run = useCallback((keepData: boolean) => {
    const current = ++generation.current;
    setState((previous) =>
      keepData && previous.state === 'ready' ? { ...previous, refreshing: true } : { state: 'loading' },
    );
    loadRef.current().then(
      (data) => current === generation.current && setState({ state: 'ready', data, refreshing: false }),
      (error: unknown) =>
        current === generation.current &&
        setState({ state: 'error', error: error instanceof Error ? error : new Error(String(error)) }),
    );
  }, []);

  // `deps` are the caller's, as with useEffect.
  useEffect(() => run(false), deps);
  useDashboardEvent((signal) => {
    if (reloadOn && (signal.type === 'events.resync' || reloadOn(signal))) run(true);
  });
  const reload = useCallback(() => run(true), [run]);
  return { ...state, reload } as Resource<T>;
}
