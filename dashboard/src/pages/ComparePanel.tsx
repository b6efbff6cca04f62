import type { CompareEndpoint, CompareResponse, CompareSide } from '@spectator/shared';
import { type FormEvent, useState } from 'react';
import { BreakingBadge, EndpointName } from '../components/badges';
import { ChangesTable } from '../components/ChangesTable';
import { FormError, ListTable } from '../components/forms';
import { Empty } from '../components/states';
import { useAction } from '../hooks/action';
import { useApp } from '../hooks/app';
import { shortCommit } from '../lib/format';
import { KIND_LABELS, KIND_ORDER, type RowKind } from '../lib/versions';

/** One side of a comparison as edited in the form; the pull request only counts for CI. */
interface SideDraft {
  environment: RowKind;
  pullRequest: string;
}

/** A side as people say it: `Production`, `Staging`, `PR #42`, `CI runs`. */
function sideLabel(side: CompareSide): string {
  return side.environment === 'ci' && side.pullRequest !== null
    ? `PR #${side.pullRequest}`
    : KIND_LABELS[side.environment];
}

/** How an endpoint differs, in the words of the two sides. */
function differenceLabel(endpoint: CompareEndpoint, result: CompareResponse): string {
  switch (endpoint.status) {
    case 'same':
      return 'same version';
    case 'changed':
      return 'changes';
    case 'only in to':
      return `not seen in ${sideLabel(result.from)}`;
    case 'only in from':
      return `not seen in ${sideLabel(result.to)}`;
  }
}

function SideFields({
  label,
  side,
  onChange,
}: {
  label: string;
  side: SideDraft;
  onChange: (side: SideDraft) => void;
}) {
  return (
    <fieldset className="compare-side">
      <legend>{label}</legend>
      <label>
        Environment
        <select
          value={side.environment}
          onChange={(e) => onChange({ ...side, environment: e.target.value as RowKind })}
        >
          {KIND_ORDER.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_LABELS[kind]}
            </option>
          ))}
        </select>
      </label>
      {side.environment === 'ci' && (
        <label>
          Pull request
          <input
            value={side.pullRequest}
            onChange={(e) => onChange({ ...side, pullRequest: e.target.value })}
            placeholder="newest of any"
            size={10}
          />
        </label>
      )}
    </fieldset>
  );
}

/** Where a side's version was seen: its build, or pull request, and commit. */
function seenWhere(side: CompareEndpoint['from']): string {
  const where = side.build ?? (side.pullRequest ? `PR #${side.pullRequest}` : null);
  return [where, side.commit ? shortCommit(side.commit) : null].filter(Boolean).join(' · ');
}

/**
 * A release review on the Versions page: what clients of one environment would see change if
 * another replaced it (e.g. production ← staging, or production ← a pull request's CI run), per
 * endpoint, with the classified changes between the two versions.
 */
export function ComparePanel() {
  const { api, project } = useApp();
  const [from, setFrom] = useState<SideDraft>({ environment: 'production', pullRequest: '' });
  const [to, setTo] = useState<SideDraft>({ environment: 'staging', pullRequest: '' });
  const [result, setResult] = useState<CompareResponse | null>(null);
  const { busy, error, run } = useAction();

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const pullRequest = (side: SideDraft) =>
      side.environment === 'ci' && side.pullRequest.trim() ? side.pullRequest.trim() : undefined;
    const compared = await run(() =>
      api.compare(project, {
        from: from.environment,
        to: to.environment,
        fromPullRequest: pullRequest(from),
        toPullRequest: pullRequest(to),
      }),
    );
    setResult(compared ?? null);
  };

  const differing = result?.endpoints.filter((endpoint) => endpoint.status !== 'same') ?? [];
  return (
    <section className="card" aria-labelledby="compare-title">
      <h2 id="compare-title">Compare environments</h2>
      <p className="muted">
        What clients of the first would see change if the second replaced it: a release review from evidence.
      </p>
      <form className="inline-form" onSubmit={submit}>
        <SideFields label="Clients run" side={from} onChange={setFrom} />
        <SideFields label="Replaced by" side={to} onChange={setTo} />
        <button type="submit" disabled={busy}>
          Compare
        </button>
      </form>
      <FormError error={error} />
      {result &&
        (differing.length === 0 ? (
          <Empty title="Nothing changes">Every endpoint seen on both sides runs the same version.</Empty>
        ) : (
          <>
            <p role="status">
              {differing.length} endpoint{differing.length === 1 ? '' : 's'} differ{differing.length === 1 ? 's' : ''};{' '}
              <BreakingBadge breaking={result.breaking} />
            </p>
            <ListTable
              columns={[
                { label: 'Endpoint' },
                { label: 'Clients run' },
                { label: 'Replaced by' },
                { label: 'Difference' },
                { label: 'Impact' },
              ]}
              testId="compare"
            >
              {differing.map((endpoint) => (
                <tr key={endpoint.endpointId} className={endpoint.breaking ? 'breaking' : undefined}>
                  <td>
                    <EndpointName method={endpoint.method} path={endpoint.path} />
                    {endpoint.changes.length > 0 && (
                      <details>
                        <summary>
                          {endpoint.changes.length} change{endpoint.changes.length === 1 ? '' : 's'}
                        </summary>
                        <ChangesTable
                          changes={endpoint.changes}
                          sides={[
                            `${sideLabel(result.from)} ${endpoint.from.version}`,
                            `${sideLabel(result.to)} ${endpoint.to.version}`,
                          ]}
                        />
                      </details>
                    )}
                  </td>
                  <td>
                    {endpoint.from.version}
                    {endpoint.from.drift && ' ⚠'} <span className="muted small">{seenWhere(endpoint.from)}</span>
                  </td>
                  <td>
                    {endpoint.to.version}
                    {endpoint.to.drift && ' ⚠'} <span className="muted small">{seenWhere(endpoint.to)}</span>
                  </td>
                  <td>{differenceLabel(endpoint, result)}</td>
                  <td>{endpoint.status === 'changed' && <BreakingBadge breaking={endpoint.breaking} />}</td>
                </tr>
              ))}
            </ListTable>
          </>
        ))}
    </section>
  );
}
