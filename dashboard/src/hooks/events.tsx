import { ROUTES } from '@spectator/shared';
import { createContext, useContext, useEffect, useRef, useState, type ReactNode } from 'react';
import { eventsProtocols, eventsUrl, parseDashboardEvent, reconnectDelay, type DashboardSignal } from '../lib/events';

type Listener = (signal: DashboardSignal) => void;
export type EventsStatus = 'connecting' | 'open' | 'closed';

interface EventsHub {
  subscribe(listener: Listener): () => void;
  status: EventsStatus;
}

const EventsContext = createContext<EventsHub>({ subscribe: () => () => undefined, status: 'closed' });

/**
 * Holds the one events WebSocket of the signed-in project and fans its events out to every
 * `useDashboardEvent`. Reconnects with jittered backoff; after a reconnect it sends a resync signal,
 * because events sent while the socket was away are lost (no polling otherwise).
 */
export function EventsProvider({
  project,
  token,
  children,
}: {
  project: string;
  token: string | null;
  children: ReactNode;
}) {
  const listeners = useRef(new Set<Listener>());
  const [status, setStatus] = useState<EventsStatus>('connecting');
  const [hub] = useState(() => ({
    subscribe(listener: Listener) {
      listeners.current.add(listener);
      return () => listeners.current.delete(listener);
    },
  }));

  useEffect(() => {
    let socket: WebSocket | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let attempt = 0;
    let stopped = false;
    let everOpen = false;
    const emit = (signal: DashboardSignal) => listeners.current.forEach((listener) => listener(signal));

    const connect = () => {
      setStatus('connecting');
      socket = new WebSocket(eventsUrl(window.location, ROUTES.projectEvents(project)), eventsProtocols(token));
      socket.onopen = () => {
        attempt = 0;
        setStatus('open');
        if (everOpen) emit({ type: 'events.resync' });
        everOpen = true;
      };
      socket.onmessage = (message) => {
        if (typeof message.data !== 'string') return;
        const event = parseDashboardEvent(message.data);
        if (event) emit(event);
      };
      socket.onclose = () => {
        if (stopped) return;
        setStatus('closed');
        timer = setTimeout(connect, reconnectDelay(attempt++));
      };
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      socket?.close();
    };
  }, [project, token]);

  return <EventsContext.Provider value={{ subscribe: hub.subscribe, status }}>{children}</EventsContext.Provider>;
}

/** Calls `handler` for every live event of the project (and for resync after a reconnect). */
export function useDashboardEvent(handler: Listener): void {
  const { subscribe } = useContext(EventsContext);
  const latest = useRef(handler);
  useEffect(() => {
    latest.current = handler;
  });
  useEffect(() => subscribe((signal) => latest.current(signal)), [subscribe]);
}

/** Whether live updates are flowing, for the indicator in the header. */
export function useEventsStatus(): EventsStatus {
  return useContext(EventsContext).status;
}
