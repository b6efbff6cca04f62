import type { DocumentationResponse } from '@spectator/shared';
import { useState, type FormEvent } from 'react';
import { EndpointName } from '../components/badges';
import { FormError, ReviewHeader } from '../components/forms';
import { Empty } from '../components/states';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useDrafts } from '../hooks/drafts';
import { routeHref } from '../lib/routes';
import { NeedsScope } from '../components/Permission';
import { ProposedForApproval } from '../components/ProposedForApproval';

/** What the backend takes in one documentation commit (`POST /documentation`). */
const MAX_ENDPOINTS_PER_COMMIT = 500;

/**
 * After Finish: choose, per finished endpoint, whether to document its bodies, then Commit changes.
 * The commit makes each endpoint's first version (1.0) through a proposal approved at once (under
 * four eyes, a proposal for another approver).
 */
export function CommitPage({ captureId }: { captureId: string }) {
  const { api, project } = useApp();
  const drafts = useDrafts();
  const finished = drafts.drafts(captureId);
  const [message, setMessage] = useState('');
  const { busy, error, run } = useAction();
  const [committed, setCommitted] = useState<DocumentationResponse | null>(null);

  const commit = async (event: FormEvent) => {
    event.preventDefault();
    const endpoints = finished.map(({ method, path, description, documentBodies }) => ({
      method,
      path,
      description,
      documentBodies,
    }));
    const parts = Math.ceil(endpoints.length / MAX_ENDPOINTS_PER_COMMIT);
    const result = await run(async () => {
      // The backend takes up to 500 endpoints per commit: more are committed in parts, one proposal each.
      const versions: DocumentationResponse['versions'] = [];
      let proposalId: string | null = null;
      let awaitingApproval = false;
      for (let part = 0; part < parts; part++) {
        const text = message.trim();
        const answer = await api.commitDocumentation(project, {
          captureId,
          endpoints: endpoints.slice(part * MAX_ENDPOINTS_PER_COMMIT, (part + 1) * MAX_ENDPOINTS_PER_COMMIT),
          ...(text ? { message: parts > 1 ? `${text} (part ${part + 1} of ${parts})` : text } : {}),
        });
        versions.push(...answer.versions);
        proposalId ??= answer.proposalId;
        awaitingApproval ||= answer.awaitingApproval === true;
      }
      return { proposalId, versions, ...(awaitingApproval ? { awaitingApproval } : {}) };
    });
    if (!result) return;
    drafts.clear(captureId);
    setCommitted(result);
  };

  if (committed?.awaitingApproval)
    return (
      <div className="page">
        <ProposedForApproval committed={committed} captureId={captureId} />
      </div>
    );
  if (committed) {
    return (
      <div className="page">
        <div className="card success" role="status">
          <h1>Changes committed</h1>
          <ul>
            {committed.versions.map((version) => (
              <li key={`${version.method} ${version.path}`}>
                <EndpointName method={version.method} path={version.path} /> is documented as version{' '}
                <strong>{version.version}</strong>
                {version.previous ? ` (was ${version.previous})` : ''}.
              </li>
            ))}
          </ul>
          <div className="row">
            <a className="button primary" href={routeHref({ page: 'docs', project })}>
              See the documentation
            </a>
            <a className="button" href={routeHref({ page: 'captures', project, captureId })}>
              Back to review
            </a>
          </div>
        </div>
      </div>
    );
  }

  return (
    <div className="page">
      <ReviewHeader captureId={captureId} />
      {finished.length === 0 ? (
        <Empty title="Nothing finished yet">Open an undocumented endpoint, describe it and choose Finish.</Empty>
      ) : (
        <form onSubmit={commit} className="commit-form">
          <fieldset className="card">
            <legend>Choose which bodies to document</legend>
            {finished.length > MAX_ENDPOINTS_PER_COMMIT && (
              <p className="muted">
                {finished.length} endpoints: committed in {Math.ceil(finished.length / MAX_ENDPOINTS_PER_COMMIT)} parts
                of at most {MAX_ENDPOINTS_PER_COMMIT}, one proposal each.
              </p>
            )}
            <ul className="plain-list">
              {finished.map((draft) => (
                <li key={`${draft.method} ${draft.path}`} className="draft">
                  <div>
                    <EndpointName method={draft.method} path={draft.path} />
                    <p className="muted">{draft.description || 'No description.'}</p>
                  </div>
                  <label className="checkbox">
                    <input
                      type="checkbox"
                      checked={draft.documentBodies}
                      onChange={(e) =>
                        drafts.update(captureId, draft.method, draft.path, { documentBodies: e.target.checked })
                      }
                    />
                    Document the request and response bodies
                  </label>
                  <div className="row">
                    <a
                      href={routeHref({
                        page: 'undocumented',
                        project,
                        captureId,
                        method: draft.method,
                        path: draft.path,
                      })}
                    >
                      Edit
                    </a>
                    <button
                      type="button"
                      className="link"
                      onClick={() => drafts.remove(captureId, draft.method, draft.path)}
                    >
                      Remove
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          </fieldset>
          <label>
            Message <span className="muted">(optional)</span>
            <input value={message} onChange={(e) => setMessage(e.target.value)} placeholder="Why these changes" />
          </label>
          <FormError error={error} />
          <div className="row">
            <NeedsScope scope="write" action="Committing documentation">
              <button type="submit" className="primary" disabled={busy}>
                {busy ? 'Committing…' : 'Commit changes'}
              </button>
            </NeedsScope>
            <a href={routeHref({ page: 'captures', project, captureId })}>Review more endpoints first</a>
          </div>
        </form>
      )}
    </div>
  );
}
