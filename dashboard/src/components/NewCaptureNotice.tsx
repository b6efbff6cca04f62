import type { DashboardEvent } from '@spectator/shared';
import { useEffect, useRef, useState } from 'react';
import { useApp } from '../hooks/app';
import { useDashboardEvent } from '../hooks/events';
import { environmentLabel, formatTime } from '../lib/format';
import { navigate, type ProjectRoute } from '../lib/routes';
import { Modal } from './Modal';

type CaptureStarted = Extract<DashboardEvent, { type: 'capture.started' }>;

/** The Review screens, where a new capture changes what the user is looking at. */
const REVIEW_PAGES: ReadonlySet<ProjectRoute['page']> = new Set(['captures', 'undocumented', 'diff', 'commit']);

function sameEnvironment(a: CaptureStarted['environment'], b: CaptureStarted['environment']): boolean {
  return a.kind === b.kind && a.name === b.name;
}

/**
 * The modal notice of a new capture (spec §3, Capture): the app was rebuilt or restarted. Review
 * moves the view to the newest capture; the notice arrives live over the events socket. It is shown
 * on the Review screens for a capture of the environment being reviewed, so CI runs and deployments
 * elsewhere do not interrupt a local review (the captures list still updates live).
 *
 * A capture that started while the socket was away sends its event to nobody: restarting `npm start`
 * restarts the backend with the app, and the tab reconnects only after the agent's new capture has
 * begun. So after a reconnect the captures list is compared with the ids known before, and the
 * newest capture that is new since then raises the notice as its event would have.
 */
export function NewCaptureNotice({ route }: { route: ProjectRoute }) {
  const { api, project } = useApp();
  const [started, setStarted] = useState<CaptureStarted | null>(null);
  const routeRef = useRef(route);
  routeRef.current = route;
  const knownIds = useRef<Set<string> | null>(null);

  useEffect(() => {
    knownIds.current = null;
    api.captures(project).then(
      (captures) => (knownIds.current ??= new Set(captures.map((c) => c.id))),
      () => undefined,
    );
  }, [api, project]);

  useDashboardEvent((event) => {
    if (event.type === 'capture.started') knownIds.current?.add(event.captureId);
    if (!REVIEW_PAGES.has(routeRef.current.page)) return;
    const viewed = 'captureId' in routeRef.current ? routeRef.current.captureId : undefined;
    if (event.type === 'events.resync') {
      // Which captures are new since the socket went away, and which of them to offer.
      api.captures(project).then(
        (captures) => {
          const known = knownIds.current;
          knownIds.current = new Set([...(known ?? []), ...captures.map((c) => c.id)]);
          if (!known) return;
          const environment = captures.find((c) => c.id === viewed)?.environment;
          const missed = captures.find(
            (c) => !known.has(c.id) && (!environment || sameEnvironment(c.environment, environment)),
          );
          if (missed)
            setStarted({
              type: 'capture.started',
              captureId: missed.id,
              environment: missed.environment,
              startedAt: missed.startedAt,
            });
        },
        () => undefined,
      );
      return;
    }
    if (event.type !== 'capture.started') return;
    if (!viewed) return setStarted(event);
    // Which environment is under review: looked up when a capture starts, not kept in sync.
    api.captures(project).then(
      (captures) => {
        const environment = captures.find((c) => c.id === viewed)?.environment;
        if (!environment || sameEnvironment(environment, event.environment)) setStarted(event);
      },
      () => setStarted(event),
    );
  });
  if (!started) return null;
  const review = () => {
    setStarted(null);
    navigate({ page: 'captures', project, captureId: started.captureId });
  };
  return (
    <Modal
      title="New capture"
      onClose={() => setStarted(null)}
      actions={
        <>
          <button type="button" className="primary" onClick={review} data-autofocus>
            Review
          </button>
          <button type="button" onClick={() => setStarted(null)}>
            Not now
          </button>
        </>
      }
    >
      <p>
        The application was rebuilt or restarted: a new capture started in{' '}
        <strong>
          {environmentLabel({
            kind: started.environment.kind,
            name: started.environment.name,
            pullRequest: null,
            build: null,
          })}
        </strong>{' '}
        at {formatTime(started.startedAt)}.
      </p>
      <p className="muted">Diffs from earlier captures are not shown for it unless its traffic shows them again.</p>
    </Modal>
  );
}
