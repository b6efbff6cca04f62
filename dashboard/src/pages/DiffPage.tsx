import type {
  BodyDocResponse,
  ChangeResponse,
  DiffResponse,
  DocumentationResponse,
  EndpointResponse,
  ObservedEndpointResponse,
} from '@spectator/shared';
import { useState } from 'react';
import { BreakingBadge, EndpointName } from '../components/badges';
import { RejectedRequests } from '../components/BodyShapes';
import { ChangesTable } from '../components/ChangesTable';
import { FormError, ReviewHeader } from '../components/forms';
import { ShapeTable } from '../components/ShapeTable';
import { Async, Empty } from '../components/states';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { bodyLabel, plural } from '../lib/format';
import { routeHref } from '../lib/routes';
import { acceptedVersion } from '../lib/versions';
import { NeedsScope } from '../components/Permission';
import { ProposedForApproval } from '../components/ProposedForApproval';

interface DiffView {
  diff: DiffResponse | null;
  documented: EndpointResponse | null;
  observed: ObservedEndpointResponse | null;
}

/** A diff of one endpoint in one capture: documented and observed side by side, then accept or leave it. */
export function DiffPage({ captureId, method, path }: { captureId: string; method: string; path: string }) {
  const { api, project } = useApp();
  const view = useResource<DiffView>(
    async () => {
      const [diffs, endpoints, observed] = await Promise.all([
        api.diffs(project, captureId),
        api.endpoints(project),
        api.observed(project, captureId, method, path).catch(() => null),
      ]);
      const diff = diffs.find((d) => d.method === method && d.path === path) ?? null;
      const documented =
        endpoints.find((e) => (diff ? e.id === diff.endpointId : e.method === method && e.path === path)) ?? null;
      return { diff, documented, observed };
    },
    [api, project, captureId, method, path],
    (e) => (e.type === 'capture.updated' && e.captureId === captureId) || e.type === 'documentation.committed',
  );
  // Kept here, not in DiffDetail: the commit's own documentation.committed event reloads the view,
  // which then has no diff, and the answer (which version was made) was replaced by "No diff".
  const [accepted, setAccepted] = useState<Accepted | null>(null);
  const shown =
    accepted && accepted.captureId === captureId && accepted.diff.method === method && accepted.diff.path === path
      ? accepted
      : null;

  return (
    <div className="page">
      <ReviewHeader captureId={captureId} endpoint={{ method, path }} />
      {shown ? (
        <AcceptedNotice accepted={shown} />
      ) : (
        <Async resource={view} what="the diff">
          {({ diff, documented, observed }) =>
            diff ? (
              <DiffDetail
                diff={diff}
                documented={documented}
                observed={observed}
                captureId={captureId}
                onAccepted={setAccepted}
              />
            ) : (
              <Empty title="No diff for this endpoint in this capture">
                Its traffic matches the documented behaviour, or the diff was accepted.{' '}
                <a href={routeHref({ page: 'captures', project, captureId })}>Back to review</a>
              </Empty>
            )
          }
        </Async>
      )}
    </div>
  );
}

/** What accepting a diff made: the commit's answer and the diff it answered. */
interface Accepted {
  captureId: string;
  result: DocumentationResponse;
  diff: DiffResponse;
}

/** The version the accepted changes made (the backend's answer, not the preview of the button). */
function AcceptedNotice({ accepted: { captureId, result, diff } }: { accepted: Accepted }) {
  const { project } = useApp();
  const made = result.versions.find((v) => v.method === diff.method && v.path === diff.path);
  if (result.awaitingApproval) return <ProposedForApproval committed={result} captureId={captureId} />;
  return (
    <div className="card success" role="status">
      <h2>Changes accepted</h2>
      <p>
        <EndpointName method={diff.method} path={diff.path} /> is now version{' '}
        <strong>{made?.version ?? acceptedVersion(diff.version, diff.changes) ?? '?'}</strong> (was {diff.version}).
      </p>
      <div className="row">
        <a className="button primary" href={routeHref({ page: 'captures', project, captureId })}>
          Back to review
        </a>
        <a className="button" href={routeHref({ page: 'docs', project, endpointId: diff.endpointId })}>
          See its documentation
        </a>
      </div>
    </div>
  );
}

function DiffDetail({
  diff,
  documented,
  observed,
  captureId,
  onAccepted,
}: {
  diff: DiffResponse;
  documented: EndpointResponse | null;
  observed: ObservedEndpointResponse | null;
  captureId: string;
  onAccepted: (accepted: Accepted) => void;
}) {
  const { api, project } = useApp();
  const { busy, error, run } = useAction();
  const next = acceptedVersion(diff.version, diff.changes);

  const accept = async () => {
    // The message titles the proposal: without it, accepting was titled "Document POST /posts" like the
    // first commit. No version in it: the backend decides that (the button's is a preview).
    const message = `Accept changes to ${diff.method} ${diff.path} (was ${diff.version})`;
    const result = await run(() =>
      api.commitDocumentation(project, {
        captureId,
        endpoints: [{ method: diff.method, path: diff.path, documentBodies: true }],
        message,
      }),
    );
    if (result) onAccepted({ captureId, result, diff });
  };

  return (
    <>
      <p className="muted">
        Documented version {diff.version} · {plural(diff.interactions, 'interaction')}{' '}
        {diff.interactions === 1 ? 'differs' : 'differ'} · {plural(diff.changes.length, 'change')}{' '}
        <BreakingBadge breaking={diff.breaking} />
      </p>
      <ChangesTable changes={diff.changes} />
      <div className="row actions">
        <NeedsScope scope="write" action="Accepting changes">
          <button type="button" className="primary" onClick={accept} disabled={busy}>
            {busy ? 'Accepting…' : `Accept changes → ${next ?? 'next version'}`}
          </button>
        </NeedsScope>
        <a className="button" href={routeHref({ page: 'captures', project, captureId })}>
          Leave it
        </a>
      </div>
      <FormError error={error} />
      <h2>Side by side</h2>
      <SideBySide changes={diff.changes} documented={documented} observed={observed} version={diff.version} />
      <RejectedRequests rejected={observed?.rejectedRequests ?? []} />
    </>
  );
}

/** Each body that changed, documented on the left and observed on the right, changed fields highlighted. */
function SideBySide({
  changes,
  documented,
  observed,
  version,
}: {
  changes: ChangeResponse[];
  documented: EndpointResponse | null;
  observed: ObservedEndpointResponse | null;
  version: string;
}) {
  const bodies = new Map<string, { direction: 'request' | 'response'; status?: number; paths: Set<string> }>();
  for (const change of changes) {
    // Parameter changes have no body to show; the changes table names them.
    if (change.in !== 'request' && change.in !== 'response') continue;
    const key = `${change.in} ${change.status ?? ''}`;
    const entry = bodies.get(key) ?? {
      direction: change.in,
      ...(change.status !== undefined ? { status: change.status } : {}),
      paths: new Set<string>(),
    };
    entry.paths.add(change.at);
    bodies.set(key, entry);
  }
  const pick = (
    source: { request: BodyDocResponse | null; responses: Array<BodyDocResponse & { status: number }> } | null,
    direction: 'request' | 'response',
    status?: number,
  ) =>
    source ? (direction === 'request' ? source.request : source.responses.find((r) => r.status === status)) : undefined;

  return (
    <div className="side-by-side-list">
      {[...bodies.values()].map(({ direction, status, paths }) => {
        const left = pick(documented, direction, status);
        const right = pick(observed, direction, status);
        return (
          <section
            key={`${direction} ${status ?? ''}`}
            className="side-by-side"
            aria-label={bodyLabel(direction, status)}
          >
            <h3>{bodyLabel(direction, status)}</h3>
            <div className="columns">
              <div>
                <h4>Documented (v{version})</h4>
                {left ? <ShapeTable schema={left.shape} highlight={paths} /> : <p className="muted">Not documented.</p>}
              </div>
              <div>
                <h4>Observed in this capture</h4>
                {right ? <ShapeTable schema={right.shape} highlight={paths} /> : <p className="muted">Not observed.</p>}
              </div>
            </div>
          </section>
        );
      })}
    </div>
  );
}
