import type { ComponentProps } from 'react';
import {
  PROPOSAL_STEPS,
  type ProposalResponse,
  type ProposalStatus,
  type ProposalStepName,
  type ProposalStepResponse,
} from '@spectator/shared';
import { ApiError } from '../api/client';
import { Badge, EndpointName } from '../components/badges';
import { BlastRadius } from '../components/BlastRadius';
import { ChangesTable } from '../components/ChangesTable';
import { FormError } from '../components/forms';
import { Async, Empty } from '../components/states';
import { TimeAgo } from '../components/TimeAgo';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { useResource } from '../hooks/resource';
import { formatTime, plural, shortCommit } from '../lib/format';
import { routeHref } from '../lib/routes';
import { NeedsScope } from '../components/Permission';

const WAITING_FOR: Record<ProposalStepName, string> = {
  Approved: 'Waiting for approval by a team member.',
  Implemented: 'Waiting for a CI run of a pull request whose traffic shows the new versions.',
  'Appeared in Staging': 'Waiting for evidence of the new versions in a staging build.',
  'Appeared in Production': 'Waiting for evidence of the new versions in a production build.',
};

const describeApproveError = (error: Error) =>
  error instanceof ApiError && error.status === 403
    ? `You may not approve this proposal: ${error.message}.`
    : error.message;

/** A status's badge colour: open waits for a person, the last step is done, the steps between are under way. */
const STATUS_TONE: Record<ProposalStatus, ComponentProps<typeof Badge>['tone']> = {
  Open: 'warn',
  Approved: 'info',
  Implemented: 'info',
  'Appeared in Staging': 'info',
  'Appeared in Production': 'ok',
};

/** Proposals (API pull requests): the list, and one proposal with its timeline and changes. */
export function ProposalsPage({ proposalId }: { proposalId?: string }) {
  const { api, project } = useApp();
  const proposals = useResource(
    () => api.proposals(project),
    [api, project],
    (e) => e.type === 'proposal.step' || e.type === 'documentation.committed',
  );
  return (
    <div className="split">
      <aside className="split-side" aria-label="Proposals">
        <h2>Proposals</h2>
        <Async resource={proposals} what="proposals">
          {(list) =>
            list.length === 0 ? (
              <Empty title="No proposals yet">Committing documentation or accepting a diff makes one.</Empty>
            ) : (
              <ol className="nav-list">
                {[...list]
                  .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
                  .map((proposal) => (
                    <li key={proposal.id}>
                      <a
                        href={routeHref({ page: 'proposals', project, proposalId: proposal.id })}
                        aria-current={proposal.id === proposalId ? 'page' : undefined}
                      >
                        <span className="proposal-title">{proposal.title || 'Untitled proposal'}</span>
                        <span className="muted small">
                          <Badge tone={STATUS_TONE[proposal.status]}>{proposal.status}</Badge>{' '}
                          {plural(proposal.endpoints.length, 'endpoint')} · <TimeAgo at={proposal.createdAt} />
                        </span>
                      </a>
                    </li>
                  ))}
              </ol>
            )
          }
        </Async>
      </aside>
      <section className="split-main">
        {proposalId ? (
          <ProposalDetail proposalId={proposalId} />
        ) : (
          <Empty title="Choose a proposal">Its timeline shows {PROPOSAL_STEPS.join(' → ')}.</Empty>
        )}
      </section>
    </div>
  );
}

function ProposalDetail({ proposalId }: { proposalId: string }) {
  const { api, project } = useApp();
  const proposal = useResource(
    () => api.proposal(project, proposalId),
    [api, project, proposalId],
    (e) => e.type === 'proposal.step' && e.proposalId === proposalId,
  );
  const approving = useAction(describeApproveError);

  const approve = async () => {
    if ((await approving.run(() => api.approveProposal(project, proposalId))) !== undefined) proposal.reload();
  };

  return (
    <Async resource={proposal} what="the proposal">
      {(p) => (
        <article className="proposal">
          <header className="page-header">
            <div>
              <h1>{p.title || 'Untitled proposal'}</h1>
              <p className="muted">
                Opened {formatTime(p.createdAt)}
                {p.createdBy ? ` by ${p.createdBy}` : ''} · <Badge tone={STATUS_TONE[p.status]}>{p.status}</Badge>
              </p>
            </div>
            {p.status === 'Open' && (
              <NeedsScope scope="approve" action="Approving">
                <button type="button" className="primary" onClick={approve} disabled={approving.busy}>
                  {approving.busy ? 'Approving…' : 'Approve'}
                </button>
              </NeedsScope>
            )}
          </header>
          <FormError error={approving.error} />
          {p.description && <p className="description">{p.description}</p>}
          <h2>Timeline</h2>
          <Timeline steps={p.steps} waiting={p.waiting} />
          {p.endpoints.some((endpoint) => endpoint.changes.some((change) => change.breaking)) && (
            <>
              <h2>Who this breaks</h2>
              <ProposalBlastRadius proposalId={proposalId} />
            </>
          )}
          <h2>Affected endpoints</h2>
          {p.endpoints.length === 0 ? (
            <Empty title="No endpoints" />
          ) : (
            p.endpoints.map((endpoint) => (
              <section key={`${endpoint.method} ${endpoint.path}`} className="card">
                <h3>
                  <EndpointName method={endpoint.method} path={endpoint.path} />{' '}
                  <span className="version-move">
                    {endpoint.fromVersion ?? 'new'} → <strong>{endpoint.toVersion}</strong>
                  </span>
                </h3>
                {p.removal ? (
                  <p className="muted">
                    Removed: version {endpoint.toVersion} documents that the endpoint is gone. A CI run or build first
                    seen after the approval shows it when none of its calls to it got anything but 404, 405 or 410.
                  </p>
                ) : null}
                {endpoint.fromVersion === null && endpoint.changes.length === 0 ? (
                  <p className="muted">A new endpoint, documented from the observed traffic.</p>
                ) : (
                  // The two sides are the versions before and after, not documented and observed traffic.
                  <ChangesTable
                    changes={endpoint.changes}
                    sides={[
                      endpoint.fromVersion === null ? 'Before' : `Version ${endpoint.fromVersion}`,
                      `Version ${endpoint.toVersion}`,
                    ]}
                  />
                )}
              </section>
            ))
          )}
        </article>
      )}
    </Async>
  );
}

/** The consumers that called what the proposal breaks, in production over the last 30 days. */
function ProposalBlastRadius({ proposalId }: { proposalId: string }) {
  const { api, project } = useApp();
  const radius = useResource(() => api.blastRadius(project, proposalId), [api, project, proposalId]);
  return (
    <Async resource={radius} what="who this breaks">
      {(answer) => <BlastRadius radius={answer} />}
    </Async>
  );
}

/** Where the evidence of a step came from: pull request, build, commit. */
function stepSource(step: ProposalStepResponse): string {
  return [
    step.pullRequest && `PR #${step.pullRequest.replace(/^#/, '')}`,
    step.build && `build ${step.build}`,
    step.commit && `commit ${shortCommit(step.commit)}`,
  ]
    .filter(Boolean)
    .join(' · ');
}

/**
 * The four steps in order, each done (actor, time, source) or still waiting for its evidence; for
 * an approved removal, why each evidence step waits (`waiting`, from the backend).
 */
export function Timeline({ steps, waiting }: { steps: ProposalStepResponse[]; waiting?: ProposalResponse['waiting'] }) {
  return (
    <ol className="timeline">
      {PROPOSAL_STEPS.map((name) => {
        const step = steps.find((s) => s.step === name);
        return (
          <li key={name} className={step ? 'done' : 'pending'} aria-label={`${name}: ${step ? 'done' : 'pending'}`}>
            <span className="dot" aria-hidden="true">
              {step ? '✓' : ''}
            </span>
            <div>
              <strong>{name}</strong>
              {step ? (
                <p className="muted small">
                  {formatTime(step.at)}
                  {step.actor ? ` · by ${step.actor}` : ''}
                  {stepSource(step) ? ` · ${stepSource(step)}` : ''}
                </p>
              ) : (
                <p className="muted small">{waiting?.find((w) => w.step === name)?.reason ?? WAITING_FOR[name]}</p>
              )}
            </div>
          </li>
        );
      })}
    </ol>
  );
}
