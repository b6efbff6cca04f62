import {
  type CaptureResponse,
  type DiffOriginsResponse,
  type DiffResponse,
  driftOriginText,
  type EndpointRuntimeFigures,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import { useEffect, useMemo, useState } from 'react';
import { Badge, BreakingBadge, EndpointName } from '../components/badges';
import { BlastRadius } from '../components/BlastRadius';
import { ListTable } from '../components/forms';
import { Pager, usePage } from '../components/Pager';
import { selectionKey, SelectionBar } from '../components/ReviewSelection';
import { Async, Empty } from '../components/states';
import { TimeAgo } from '../components/TimeAgo';
import { useApp } from '../hooks/app';
import { useDrafts } from '../hooks/drafts';
import { useResource } from '../hooks/resource';
import { environmentLabel, formatCount, formatMs, formatPercent, formatTime, plural, shortCommit } from '../lib/format';
import { redirect, routeHref } from '../lib/routes';

/** Captures newest first beside the review of the chosen one (the newest by default). */
export function CapturesPage({ captureId }: { captureId?: string }) {
  const { api, project } = useApp();
  const captures = useResource(
    () => api.captures(project),
    [api, project],
    (e) =>
      e.type === 'capture.started' ||
      e.type === 'capture.updated' ||
      e.type === 'documentation.committed' ||
      e.type === 'paths.hinted',
  );

  // Without a chosen capture, show the newest — pinned in the URL, so a later capture does not
  // pull the view away: the new-capture notice offers that move instead.
  const newest = captures.state === 'ready' ? captures.data[0]?.id : undefined;
  useEffect(() => {
    if (!captureId && newest) redirect({ page: 'captures', project }, { page: 'captures', project, captureId: newest });
  }, [captureId, newest, project]);

  return (
    <div className="split">
      <aside className="split-side" aria-label="Captures">
        <h2>Captures</h2>
        <Async resource={captures} what="captures">
          {(list) =>
            list.length === 0 ? (
              <Empty title="No captures yet">
                {/* Which token, and an upstream that is not this backend's own default port 3000 (copied as it was, it proxied to the backend). */}
                <p>
                  Run the agent in front of your API (its address as <code>--upstream</code>) with an{' '}
                  <strong>agent</strong> token of this project (Settings → Tokens), and send traffic through the agent
                  (port 4000):
                </p>
                <pre>
                  SPECTATOR_TOKEN=&lt;agent token&gt; spectator-agent --upstream http://127.0.0.1:8080 --backend{' '}
                  {window.location.origin}
                </pre>
              </Empty>
            ) : (
              <CaptureList captures={list} selected={captureId} />
            )
          }
        </Async>
      </aside>
      <section className="split-main">
        {captures.state === 'ready' && captureId && (
          <CaptureReview
            capture={captures.data.find((c) => c.id === captureId) ?? null}
            captureId={captureId}
            newestId={newest}
          />
        )}
      </section>
    </div>
  );
}

function CaptureList({ captures, selected }: { captures: CaptureResponse[]; selected?: string }) {
  const { project } = useApp();
  return (
    <ol className="capture-list">
      {captures.map((capture, index) => (
        <li key={capture.id}>
          <a
            href={routeHref({ page: 'captures', project, captureId: capture.id })}
            aria-current={capture.id === selected ? 'page' : undefined}
            className="capture-item"
          >
            <span className="capture-where">
              {environmentLabel({ ...capture, kind: capture.environment.kind, name: capture.environment.name })}
              {index === 0 && !capture.endedAt && <Badge tone="info">current</Badge>}
            </span>
            <span className="capture-meta">
              started <TimeAgo at={capture.startedAt} /> · commit {shortCommit(capture.commit)}
            </span>
            <span className="capture-counts">
              <Badge tone={capture.undocumented ? 'warn' : 'neutral'}>
                {plural(capture.undocumented, 'undocumented', 'undocumented')}
              </Badge>
              <Badge tone={capture.diffs ? 'danger' : 'neutral'}>{plural(capture.diffs, 'diff')}</Badge>
            </span>
          </a>
        </li>
      ))}
    </ol>
  );
}

/** The Review of one capture: its undocumented endpoints with counts, and its diffs. */
function CaptureReview({
  capture,
  captureId,
  newestId,
}: {
  capture: CaptureResponse | null;
  captureId: string;
  newestId?: string;
}) {
  const { api, project } = useApp();
  const drafts = useDrafts().drafts(captureId);
  const reloadOn = (e: { type: string; captureId?: string }) =>
    (e.type === 'capture.updated' && e.captureId === captureId) ||
    e.type === 'documentation.committed' ||
    e.type === 'paths.hinted';
  const undocumented = useResource(() => api.undocumented(project, captureId), [api, project, captureId], reloadOn);
  const diffs = useResource(() => api.diffs(project, captureId), [api, project, captureId], reloadOn);
  const runtime = useResource(() => api.captureRuntime(project, captureId), [api, project, captureId], reloadOn);
  const figures = useMemo(
    () =>
      new Map(
        runtime.state === 'ready' ? runtime.data.endpoints.map((e) => [`${e.method} ${e.path}`, e] as const) : [],
      ),
    [runtime],
  );
  const radius = useResource(() => api.captureBlastRadius(project, captureId), [api, project, captureId], reloadOn);
  const [filter, setFilter] = useState('');
  // Selected undocumented endpoints (`selectionKey`), per capture: moving to another capture starts afresh.
  const [selection, setSelection] = useState<{ captureId: string; keys: ReadonlySet<string> }>({
    captureId,
    keys: new Set(),
  });
  const selected = selection.captureId === captureId ? selection.keys : new Set<string>();
  const select = (keys: ReadonlySet<string>) => setSelection({ captureId, keys });

  if (!capture)
    return (
      <Empty title="This capture does not exist">It may belong to another project. Choose one from the list.</Empty>
    );
  return (
    <div className="review">
      <header className="page-header">
        <div>
          <h1>Review</h1>
          <p className="muted">
            {environmentLabel({ ...capture, kind: capture.environment.kind, name: capture.environment.name })} · started{' '}
            {formatTime(capture.startedAt)}
            {capture.endedAt ? ` · ended ${formatTime(capture.endedAt)}` : ''} · commit {shortCommit(capture.commit)} ·{' '}
            {plural(capture.interactions, 'interaction')}
          </p>
        </div>
        {newestId && newestId !== captureId && (
          <a className="button" href={routeHref({ page: 'captures', project, captureId: newestId })}>
            Go to the newest capture
          </a>
        )}
      </header>

      {drafts.length > 0 && (
        <div className="callout" role="status">
          {plural(drafts.length, 'endpoint')} finished and ready to commit.{' '}
          <a className="button primary" href={routeHref({ page: 'commit', project, captureId })}>
            Choose bodies and commit
          </a>
        </div>
      )}

      <section aria-labelledby="undocumented-title">
        <div className="section-head">
          <h2 id="undocumented-title">Undocumented endpoints</h2>
          <input
            type="search"
            aria-label="Filter endpoints"
            placeholder="Filter by path…"
            value={filter}
            onChange={(e) => setFilter(e.target.value)}
          />
        </div>
        <Async resource={undocumented} what="undocumented endpoints">
          {(list) => (
            <UndocumentedTable
              list={list}
              filter={filter}
              captureId={captureId}
              finished={drafts}
              selected={selected}
              onSelect={select}
              figures={figures}
            />
          )}
        </Async>
        {capture.unmatched.requests > 0 && (
          <p
            className="muted"
            data-testid="unmatched"
            title="Requests that only got 404 or 405 on paths matching no known or learned template (scanners, typos): counted apart, never endpoints. The paths are not kept."
          >
            unmatched: {plural(capture.unmatched.requests, 'request')} on {plural(capture.unmatched.paths, 'path')}
          </p>
        )}
      </section>

      <section aria-labelledby="diffs-title">
        <h2 id="diffs-title">Diffs</h2>
        <Async resource={diffs} what="diffs">
          {(list) => <DiffsTable list={list} filter={filter} captureId={captureId} reloadOn={reloadOn} />}
        </Async>
      </section>

      <section aria-labelledby="blast-radius-title">
        <h2 id="blast-radius-title">Who these diffs break</h2>
        <Async resource={radius} what="who the diffs break">
          {(answer) => <BlastRadius radius={answer} />}
        </Async>
      </section>
    </div>
  );
}

const matches = (filter: string) => {
  const needle = filter.trim().toLowerCase();
  return (item: { method: string; path: string }) =>
    !needle || `${item.method} ${item.path}`.toLowerCase().includes(needle);
};

function UndocumentedTable({
  list,
  filter,
  captureId,
  finished,
  selected,
  onSelect,
  figures,
}: {
  list: UndocumentedEndpointResponse[];
  filter: string;
  captureId: string;
  finished: Array<{ method: string; path: string }>;
  selected: ReadonlySet<string>;
  onSelect: (next: ReadonlySet<string>) => void;
  /** Runtime per endpoint (`METHOD path`) in the capture's pull request or build. */
  figures: ReadonlyMap<string, EndpointRuntimeFigures>;
}) {
  const { project } = useApp();
  const shown = useMemo(() => list.filter(matches(filter)), [list, filter]);
  const { rows, pager } = usePage(shown);
  const done = useMemo(() => new Set(finished.map((d) => `${d.method} ${d.path}`)), [finished]);
  if (list.length === 0)
    return (
      <Empty title="Nothing undocumented">
        Every endpoint seen in this capture is documented (or ignored by a rule).
      </Empty>
    );
  if (shown.length === 0) return <Empty title="No endpoint matches the filter" />;
  const toggle = (key: string) => {
    const next = new Set(selected);
    if (!next.delete(key)) next.add(key);
    onSelect(next);
  };
  return (
    <>
      <SelectionBar captureId={captureId} shown={shown} selected={selected} onSelect={onSelect} />
      <ListTable
        columns={[
          { label: 'Select', hidden: true },
          { label: 'Endpoint' },
          { label: 'Interactions', numeric: true, wideOnly: true },
          { label: 'To review', numeric: true },
          { label: 'p95', numeric: true, wideOnly: true },
          { label: 'Server errors', numeric: true, wideOnly: true },
          { label: 'State', hidden: true },
        ]}
        testId="undocumented"
      >
        {rows.map((endpoint) => (
          <tr key={selectionKey(endpoint)}>
            <td className="select-cell">
              <input
                type="checkbox"
                aria-label={`Select ${selectionKey(endpoint)}`}
                checked={selected.has(selectionKey(endpoint))}
                onChange={() => toggle(selectionKey(endpoint))}
              />
            </td>
            <td>
              <a
                href={routeHref({
                  page: 'undocumented',
                  project,
                  captureId,
                  method: endpoint.method,
                  path: endpoint.path,
                })}
              >
                <EndpointName method={endpoint.method} path={endpoint.path} />
              </a>
            </td>
            <td className="num wide-only">{formatCount(endpoint.interactions)}</td>
            <td className="num">
              <span className="count" title="New requests and responses to review">
                {formatCount(endpoint.count)}
              </span>
            </td>
            <RuntimeCells figures={figures.get(`${endpoint.method} ${endpoint.path}`)} />
            <td>{done.has(`${endpoint.method} ${endpoint.path}`) && <Badge tone="ok">finished</Badge>}</td>
          </tr>
        ))}
      </ListTable>
      <Pager pager={pager} testId="undocumented-pager" />
    </>
  );
}

/** p95 and server error rate of an endpoint in the capture's pull request or build; dashes without runtime evidence. */
function RuntimeCells({ figures }: { figures: EndpointRuntimeFigures | undefined }) {
  const title =
    figures &&
    `${formatCount(figures.requests)} requests in this pull request or build since it began: p95 time to last byte, server errors`;
  return (
    <>
      <td className="num wide-only" title={title}>
        {figures?.p95 == null ? '–' : formatMs(figures.p95)}
      </td>
      <td className={`num wide-only${figures && figures.errorRate >= 0.01 ? ' cell-errors' : ''}`} title={title}>
        {figures ? formatPercent(figures.errorRate) : '–'}
      </td>
    </>
  );
}

/** Diffs whose origins one request asks for at most (the backend's cap). */
const MAX_ORIGINS_PAGE = 1_000;

/**
 * Where the traffic of the shown diffs was first seen, by `method path`: one request for the span
 * of `list` (sorted as the backend's view) from the first shown row to the last.
 */
function useDiffOrigins(
  list: readonly DiffResponse[],
  rows: readonly DiffResponse[],
  captureId: string,
  reloadOn: (e: { type: string; captureId?: string }) => boolean,
): ReadonlyMap<string, DiffOriginsResponse> {
  const { api, project } = useApp();
  const first = rows.length === 0 ? -1 : list.indexOf(rows[0]!);
  const last = rows.length === 0 ? -1 : list.indexOf(rows[rows.length - 1]!);
  const before = first > 0 ? list[first - 1] : undefined;
  const after = before && `${before.method} ${before.path}`;
  const limit = Math.min(MAX_ORIGINS_PAGE, last - first + 1);
  const origins = useResource(
    () => (first < 0 ? Promise.resolve([]) : api.diffOrigins(project, captureId, { after, limit })),
    [api, project, captureId, first, after, limit],
    reloadOn,
  );
  return useMemo(
    () => new Map(origins.state === 'ready' ? origins.data.map((o) => [`${o.method} ${o.path}`, o] as const) : []),
    [origins],
  );
}

function DiffsTable({
  list,
  filter,
  captureId,
  reloadOn,
}: {
  list: DiffResponse[];
  filter: string;
  captureId: string;
  reloadOn: (e: { type: string; captureId?: string }) => boolean;
}) {
  const { project } = useApp();
  const shown = useMemo(() => list.filter(matches(filter)), [list, filter]);
  const { rows, pager } = usePage(shown);
  const origins = useDiffOrigins(list, rows, captureId, reloadOn);
  if (list.length === 0)
    return <Empty title="No diffs">The traffic of this capture matches the documented behaviour.</Empty>;
  if (shown.length === 0) return <Empty title="No diff matches the filter" />;
  return (
    <>
      <ListTable
        columns={[
          { label: 'Endpoint' },
          { label: 'Documented', wideOnly: true },
          { label: 'Interactions', numeric: true, wideOnly: true },
          { label: 'Changes', numeric: true },
          { label: 'Impact' },
          { label: 'First seen' },
        ]}
        testId="diffs"
      >
        {rows.map((diff) => (
          <tr key={`${diff.method} ${diff.path}`}>
            <td>
              <a href={routeHref({ page: 'diff', project, captureId, method: diff.method, path: diff.path })}>
                <EndpointName method={diff.method} path={diff.path} />
              </a>
            </td>
            <td className="wide-only">v{diff.version}</td>
            <td className="num wide-only">{formatCount(diff.interactions)}</td>
            <td className="num">
              <span className="count">{diff.changes.length}</span>
            </td>
            <td>
              <BreakingBadge breaking={diff.breaking} />
            </td>
            <DiffSince origins={origins.get(`${diff.method} ${diff.path}`)} />
          </tr>
        ))}
      </ListTable>
      <Pager pager={pager} testId="diffs-pager" />
    </>
  );
}

/** "since PR #42 (abc1234), staging build s-102": where the traffic of a diff was first seen. */
function DiffSince({ origins }: { origins: DiffOriginsResponse | undefined }) {
  if (origins === undefined) return <td className="muted">…</td>;
  if (origins.since === '')
    return (
      <td className="muted" title="No CI run, staging build or production build has shown this traffic yet">
        –
      </td>
    );
  const title = origins.origins.map((o) => `${driftOriginText(o)}: first evidence ${formatTime(o.seenAt)}`).join('\n');
  return (
    <td className="drift-since" title={title}>
      {origins.since}
    </td>
  );
}
