import type { DocumentationResponse } from '@spectator/shared';
import { useApp } from '../hooks/app';
import { routeHref } from '../lib/routes';
import { EndpointName } from './badges';

/**
 * A documentation commit under four eyes (Commit changes, Accept changes): nothing is documented
 * yet; the changes are a proposal another approver approves, and this says what it would make.
 */
export function ProposedForApproval({ committed, captureId }: { committed: DocumentationResponse; captureId: string }) {
  const { project } = useApp();
  const changing = committed.versions.filter((version) => version.version !== version.previous);
  return (
    <div className="card success" role="status">
      <h2>Proposed for approval</h2>
      <p>
        This project requires a second person to approve (four eyes):{' '}
        {committed.proposalId === null
          ? 'nothing would change, so nothing was proposed.'
          : 'your changes are a proposal that another approver approves. Once approved:'}
      </p>
      {committed.proposalId !== null && (
        <ul>
          {changing.map((version) => (
            <li key={`${version.method} ${version.path}`}>
              <EndpointName method={version.method} path={version.path} /> will be version{' '}
              <strong>{version.version}</strong>
              {version.previous ? ` (now ${version.previous})` : ''}.
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        {committed.proposalId !== null && (
          <a
            className="button primary"
            href={routeHref({ page: 'proposals', project, proposalId: committed.proposalId })}
          >
            See the proposal
          </a>
        )}
        <a className="button" href={routeHref({ page: 'captures', project, captureId })}>
          Back to review
        </a>
      </div>
    </div>
  );
}
