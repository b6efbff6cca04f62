import { ENVIRONMENT_KINDS, type DashboardEvent } from '@spectator/shared';

/** Sent to listeners when the events socket came back after a drop: events may have been missed. */
export interface ResyncEvent {
  type: 'events.resync';
}

export type DashboardSignal = DashboardEvent | ResyncEvent;

const EVENT_TYPES: ReadonlySet<string> = new Set<DashboardEvent['type']>([
  'capture.started',
  'capture.updated',
  'documentation.committed',
  'proposal.step',
  'version.changed',
  'agent.connection',
  'paths.hinted',
  'drift.appeared',
]);

/**
 * Reads one frame of `WS /api/v1/projects/{p}/events`. Returns null for anything that is not a
 * known dashboard event (a newer backend may send kinds this dashboard does not know yet).
 * Accepts the event itself or the same wrapped as `{event, data}` (the ws adapter's convention).
 */
export function parseDashboardEvent(frame: string): DashboardEvent | null {
  let value: unknown;
  try {
    value = JSON.parse(frame);
  } catch {
    return null;
  }
  if (value && typeof value === 'object' && 'data' in value && 'event' in value)
    value = (value as { data: unknown }).data;
  if (!value || typeof value !== 'object') return null;
  const event = value as { type?: unknown; environment?: { kind?: unknown } };
  if (typeof event.type !== 'string' || !EVENT_TYPES.has(event.type)) return null;
  if (event.type === 'capture.started' && typeof (value as { captureId?: unknown }).captureId !== 'string') return null;
  if (event.environment && !(ENVIRONMENT_KINDS as readonly unknown[]).includes(event.environment.kind)) return null;
  return value as DashboardEvent;
}

/** The WebSocket URL of a project's events. It carries no token: see `eventsProtocols`. */
export function eventsUrl(location: Pick<Location, 'protocol' | 'host'>, path: string): string {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return `${scheme}://${location.host}${path}`;
}

/**
 * The sub-protocols offered on the events socket: browsers cannot set headers on a WebSocket, and a
 * token in the URL would land in access logs, so it rides as `bearer.<token>`; the backend answers
 * `spectator.v1` and never echoes the token.
 */
export function eventsProtocols(token: string | null): string[] {
  // A person signed in through single sign-on: the session cookie goes with the upgrade (same origin only).
  return token === null ? ['spectator.v1'] : ['spectator.v1', `bearer.${token}`];
}

/** Reconnect delay after `attempt` failures: exponential from 0.5 s, capped at 15 s, with jitter so dashboards do not reconnect in step. */
export function reconnectDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(15_000, 500 * 2 ** attempt);
  return Math.round(base / 2 + random() * (base / 2));
}
