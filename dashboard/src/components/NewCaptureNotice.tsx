import type { DashboardEvent } from '@spectator/shared';
import { useState } from 'react';
import { useApp } from '../hooks/app';
import { useDashboardEvent } from '../hooks/events';
import { environmentLabel, formatTime } from '../lib/format';
import { navigate } from '../lib/routes';
import { Modal } from './Modal';

type CaptureStarted = Extract<DashboardEvent, { type: 'capture.started' }>;

/**
 * The modal notice of a new capture (spec §3, Capture): the app was rebuilt or restarted. Review
 * moves the view to the newest capture; the notice arrives live over the events socket.
 */
export function NewCaptureNotice() {
  const { project } = useApp();
  const [started, setStarted] = useState<CaptureStarted | null>(null);
  useDashboardEvent((event) => {
    if (event.type === 'capture.started') setStarted(event);
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
