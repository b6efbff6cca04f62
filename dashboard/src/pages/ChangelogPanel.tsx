import { useState } from 'react';
import { ApiError } from '../api/client';
import { Badge, EndpointName } from '../components/badges';
import { Async, Empty, ErrorState } from '../components/states';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { saveAsFile } from '../lib/download';
import { environmentLabel, formatTime } from '../lib/format';

/** Entries the panel shows; the Markdown and the feed carry 50. */
const SHOWN = 20;

/**
 * The changelog of the project: each new version of an endpoint, breaking or not, the proposal and
 * who approved it, where it runs now; and the same as Markdown or an Atom feed (fetched with the
 * session's token, which a plain link cannot send, and handed to the browser as a file).
 */
export function ChangelogPanel() {
  const { api, project } = useApp();
  const changelog = useResource(
    () => api.changelog(project, SHOWN),
    [api, project],
    (e) => e.type === 'documentation.committed' || e.type === 'version.changed' || e.type === 'proposal.step',
  );
  const [state, setState] = useState<'idle' | 'busy' | Error>('idle');
  const download = async (format: 'md' | 'atom') => {
    setState('busy');
    try {
      const text = await api.changelogText(project, format);
      saveAsFile(text, format === 'md' ? 'text/markdown' : 'application/atom+xml', `${project}-changelog.${format}`);
      setState('idle');
    } catch (caught) {
      setState(caught instanceof Error ? caught : new ApiError(0, String(caught), 'changelog'));
    }
  };
  return (
    <section className="card" aria-labelledby="changelog-title">
      <div className="row spread">
        <h2 id="changelog-title">Changelog</h2>
        <div className="row">
          <button type="button" onClick={() => void download('md')} disabled={state === 'busy'}>
            Markdown
          </button>
          <button type="button" onClick={() => void download('atom')} disabled={state === 'busy'}>
            Atom feed
          </button>
        </div>
      </div>
      <code
        className="muted small changelog-path"
        title="For feed readers and scripts (send your token as a bearer token)"
      >
        GET {api.changelogPath(project, 'atom')}
      </code>
      {state instanceof Error && <ErrorState error={state} what="the changelog" />}
      <Async resource={changelog} what="the changelog">
        {({ entries }) =>
          entries.length === 0 ? (
            <Empty title="No version yet" />
          ) : (
            <div className="table-scroll">
              <table className="table">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Endpoint</th>
                    <th>Version</th>
                    <th>Proposal</th>
                    <th>Runs in</th>
                  </tr>
                </thead>
                <tbody>
                  {entries.map((entry) => (
                    <tr key={entry.versionId}>
                      <td>{formatTime(entry.createdAt)}</td>
                      <td>
                        <EndpointName method={entry.method} path={entry.path} />
                      </td>
                      <td>
                        {entry.previous === null ? '' : `${entry.previous} → `}
                        {entry.version} {entry.breaking && <Badge tone="danger">breaking</Badge>}
                      </td>
                      <td>
                        {entry.proposal === null
                          ? '—'
                          : `${entry.proposal.title}${entry.proposal.approvedBy ? ` (approved by ${entry.proposal.approvedBy})` : ''}`}
                      </td>
                      <td>
                        {entry.runsIn.length === 0
                          ? 'not running anywhere now'
                          : entry.runsIn.map((where) => environmentLabel(where)).join(', ')}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Async>
    </section>
  );
}
