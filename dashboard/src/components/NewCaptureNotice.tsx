import type { DashboardEvent } from '@spectator/shared';
import { useRef, useState } from 'react';
import { useApp } from '../hooks/app';
import { useDashboardEvent } from '../hooks/events';
import { environmentLabel, formatTime } from '../lib/format';
import { navigate, type ProjectRoute } from '../lib/routes';
import { Modal } from './Modal';

type CaptureStarted = Extract<DashboardEvent, { type: 'capture.started' }>;

/** The Review screens, where a new capture changes what the user is looking at. */
const REVIEW_PAGES: ReadonlySet<ProjectRoute['page']> = new Set(['captures', 'undocumented', 'diff', 'commit']);

/**
 * The modal notice of a new capture (spec §3, Capture): the app was rebuilt or restarted. Review
 * moves the view to the newest capture; the notice arrives live over the events socket. It is shown
 * on the Review screens for a capture of the environment being reviewed, so CI runs and deployments
 * elsewhere do not interrupt a local review (the captures list still updates live).
 */
export function NewCaptureNotice({ route }: { route: ProjectRoute }) {
  const { api, project } = useApp();
  const [started, setStarted] = useState<CaptureStarted | null>(null);
  const routeRef = useRef(route);
  routeRef.current = route;

  useDashboardEvent((event) => {
    if (event.type !== 'capture.started' || !REVIEW_PAGES.has(routeRef.current.page)) return;
    const viewed = 'captureId' in routeRef.current ? routeRef.current.captureId : undefined;
    if (!viewed) return setStarted(event);
    // Which environment is under review: looked up when a capture starts, not kept in sync.
    api.captures(project).then(
      (captures) => {
        const environment = captures.find((c) => c.id === viewed)?.environment;
        if (!environment || (environment.kind === event.environment.kind && environment.name === event.environment.name)) setStarted(event);
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
        <strong>{environmentLabel({ kind: started.environment.kind, name: started.environment.name, pullRequest: null, build: null })}</strong> at {formatTime(started.startedAt)}.
      </p>
      <p className="muted">Diffs from earlier captures are not shown for it unless its traffic shows them again.</p>
    </Modal>
  );
}
